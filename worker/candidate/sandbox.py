"""The kernel-enforced sandbox: what a candidate's processes can reach, enforced by the kernel.

Each protection is reported in the child's "started" record, and with the result, as "on", "off"
(the setting) or "refused: <why>" (the kernel's answer):

  network     a network namespace of its own, empty but for a loopback that is down, made inside a
              user namespace (no privilege needed) with the PID namespace: by a fresh candidate's
              interpreter (child.py, new_namespaces()), or once by a zygote for all its forks
              (warm.py). Landlock's TCP rules (ABI 4) refuse every TCP bind and connect besides.
  syscalls    seccomp-bpf, attached where the namespaces are made, before the candidate's processes
              are forked (worker/process/seccomp.py): no execve/execveat; no ptrace, process_vm_*,
              pidfd_getfd; no mount, no namespaces (clone's flags are checked; clone3 says ENOSYS,
              and glibc falls back to clone), unshare and setns only for a PID namespace, which a
              zygote makes for each candidate and which cannot reach outside the caller's own; no
              bpf, perf_event_open, keyrings, io_uring, userfaultfd; sockets of AF_INET/AF_INET6 only
              (an AF_UNIX socket could connect to any socket file: the Valkey server's, Docker's), and
              AF_UNIX socketpairs (a pair reaches nothing but itself).
  filesystem  Landlock, in the candidate's own process before any of its code runs (confine()):
              read-only access to what Python loads (the interpreter's prefixes and sys.path, the
              system libraries) and a few system files (READ_PATHS, DEVICES); read-write access to
              its working directory, and to /dev/shm where multiprocessing's semaphores are made;
              read access to its own /proc/<pid> only. Nothing may be executed anywhere. A Landlock
              domain also keeps ptrace and /proc's ptrace-checked files (environ, mem, fd) of every
              process outside it out of reach.
  signals     Landlock's scopes (ABI 6): signals, and connections to abstract unix sockets, only
              within the candidate's own domain: its process and what it starts.
  capabilities  none, in the candidate's own process before any of its code runs (confine()): made
              in a user namespace, it would hold them all there, and with CAP_SYS_ADMIN over its PID
              namespace a process it forks could send the host a record in its name (SCM_CREDENTIALS
              with another pid: worker/process/watch.py). With no_new_privs and no execve, nothing it starts
              gets one back.

The relaxed posture (RunnerConfig.posture), for problem sets whose tasks run the system's programs and
talk to themselves over TCP (BigCodeBench: subprocess, socket servers on localhost), changes three things
and nothing else: execve is allowed, and Landlock lets the system's own program directories
(EXEC_PATHS), Python's prefixes and the candidate's working directory be executed (not /dev/shm; what a
program written there does, the candidate's code could do itself under the same sandbox); the network
namespace's loopback is up, and Landlock's TCP rules are not made (the namespace holds nothing else to
reach); a few more system files may be read (RELAXED_READ_PATHS: user
and host names, the shell's); and SCRATCH (/mnt) is a directory of the candidate's own, an empty tmpfs
in a mount namespace of the zygote's (or the fresh candidate's), which it may write as its working
directory (programs written for SandboxFusion's runners write there), and which is emptied before each
candidate starts (child.py). What an executed program does is bounded as its parent is: the same
namespaces, seccomp filter, Landlock domain, no capabilities and no_new_privs (a setuid binary gains
nothing).

The programs posture, for programs in other languages than Python (worker/languages/: a compiler, then
the program it made, or an interpreter on the program's file), allows what they need of the relaxed
posture's first and third changes and nothing of its network or SCRATCH: execve, the system's program
directories, the working directory (where the compiler writes the program) and the toolchains'
directories (RunnerConfig.toolchains: headers, class libraries, a rustup toolchain) read and executed,
RELAXED_READ_PATHS read; the network namespace's loopback stays down and Landlock's TCP rules are made,
as in the strict posture.

Each step only adds restrictions; none can be undone by what it covers. This file is the host's
codeexec.worker.candidate.sandbox and the child's module `sandbox` (loaded beside child.py): it uses built-in modules
only, and _ctypes where the sandbox is on, loaded before the import guards take it out of reach by
name. What the sandbox does not stop is in docs/security.md.
"""

import os
import sys

#: The protections this module reports, besides the PID namespace (child.py).
PROTECTIONS = ("network", "filesystem", "syscalls", "signals", "capabilities")

#: System files and directories (besides Python's own) a candidate may read: the dynamic loader's cache
#: and the libraries, time zones, CPU counts (os.cpu_count reads /sys), MIME types, OpenSSL's config.
READ_PATHS = (
    "/lib",
    "/lib32",
    "/lib64",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/share/zoneinfo",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ld.so.cache",
    "/etc/mime.types",
    "/etc/ssl/openssl.cnf",
    "/sys/devices/system/cpu",
)
#: What the relaxed posture lets candidates execute (and read): the system's programs and their helpers
#: (a compiler's cc1 lives in /usr/lib), besides Python's prefixes.
EXEC_PATHS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/libexec", "/usr/lib", "/lib", "/lib64")
#: What else it lets them read: who the users are, the host names (localhost), the shell's start-up, and
#: the machine's own figures that psutil reads (memory, CPU times, load): nothing of another process.
RELAXED_READ_PATHS = (
    "/proc/meminfo",
    "/proc/stat",
    "/proc/cpuinfo",
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/version",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/bash.bashrc",
)
#: Devices a candidate may read and write.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
#: Where POSIX semaphores and shared memory live (glibc's sem_open): multiprocessing's locks and queues.
SHARED_MEMORY = "/dev/shm"
#: The relaxed posture's private directory outside the working directory (private_scratch()), and where in
#: the working directory a script's runner copies the files of it the host is to fetch (keep_scratch();
#: worker/process/workfiles.py).
SCRATCH, SCRATCH_COPY = "/mnt", ".codeexec-scratch"
_CLONE_NEWNS = 0x20000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000

# ---- system calls (the filter itself: worker/process/seccomp.py) -------------------------------------

# Landlock's calls: every architecture numbers a call added since Linux 5.1 alike.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_SECCOMP = {"x86_64": 317}
_PR_SET_NO_NEW_PRIVS = 38
# capset(2)'s header: _LINUX_CAPABILITY_VERSION_3 and pid 0 (this thread); then two empty sets of
# (effective, permitted, inheritable) u32 (capabilities 0-31, 32-63). The ambient set goes with them.
_NO_CAPABILITIES = (0x20080522).to_bytes(4, sys.byteorder) + bytes(4), bytes(24)

# ---- Landlock -------------------------------------------------------------------------------------------

_LANDLOCK_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
# The filesystem rights this module names (the others: <linux/landlock.h>); each ABI handles every
# right below a bit: ABI 2 adds REFER (1 << 13), 3 TRUNCATE, 5 IOCTL_DEV.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR, _REMOVE_FILE = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 5
_MAKE_CHAR, _MAKE_REG, _MAKE_BLOCK, _TRUNCATE, _IOCTL_DEV = 1 << 6, 1 << 8, 1 << 11, 1 << 14, 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV  # what a rule on a file may grant


class Plan:
    """What the sandbox needs, worked out once in the process the candidate's processes are forked from (a
    zygote, or a fresh candidate's interpreter): the calls (through _ctypes), descriptors of the paths
    Landlock's rules name with each rule's bytes, and the seccomp program (`program`: seccomp_filter()'s,
    which the host builds once: building it here would cost every fresh candidate ~0.5 ms). `posture`:
    "strict", or the relaxed or programs posture's rules (above), `toolchains` being the programs posture's
    toolchain directories; `scratch`: SCRATCH is private, and written as the working directory."""

    def __init__(
        self, program: bytes | None, posture: str = "strict", toolchains: tuple = (), scratch: bool = False
    ) -> None:
        import _ctypes

        self.scratch = scratch
        self.machine = os.uname().machine
        self.call = libc()
        self.abi = self._landlock_abi()
        self.handled_fs = _FS_BY_ABI[max(v for v in _FS_BY_ABI if v <= self.abi)] if self.abi > 0 else 0
        self.handled_net = _NET_BIND_TCP | _NET_CONNECT_TCP if self.abi >= 4 and posture != "relaxed" else 0
        self.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if self.abi >= 6 else 0
        read = _READ_FILE | _READ_DIR
        runs = posture != "strict"
        # The relaxed posture runs what a test writes there (a shell script: BigCodeBench/459) under the same
        # sandbox as the candidate's own code, which can already do all a program could; the programs
        # posture, the program its compiler wrote.
        unexecutable = _IOCTL_DEV | _MAKE_CHAR | _MAKE_BLOCK | (0 if runs else _EXECUTE)
        self.workdir_rights = self.handled_fs & ~unexecutable
        self.proc_rights = read
        run = read | _EXECUTE if runs else read
        wanted = [(path, run) for path in _beneath_none(_python_paths())] + [(path, read) for path in READ_PATHS]
        if runs:
            wanted += [(path, read | _EXECUTE) for path in EXEC_PATHS]
            wanted += [(path, read) for path in RELAXED_READ_PATHS]
        if posture == "programs":
            wanted += [(path, read | _EXECUTE) for path in toolchains]
        wanted += [(path, _READ_FILE | _WRITE_FILE | _TRUNCATE) for path in DEVICES]
        wanted.append((SHARED_MEMORY, _READ_FILE | _WRITE_FILE | _TRUNCATE | _MAKE_REG | _REMOVE_FILE))
        if scratch:
            wanted.append((SCRATCH, self.workdir_rights))
        # (descriptor, struct landlock_path_beneath_attr) of each rule: a candidate only adds them. One
        # rule per file or directory (/lib is often /usr/lib): realpath() would cost more than a rule.
        self.rules: list[tuple[int, bytes]] = []
        seen = set()
        for path, rights in wanted:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:  # not on this machine
                continue
            found = os.fstat(fd)
            if (found.st_dev, found.st_ino, rights) in seen:
                os.close(fd)
                continue
            seen.add((found.st_dev, found.st_ino, rights))
            directory = found.st_mode & 0o170000 == 0o040000  # S_ISDIR, without the stat module
            self.rules.append((fd, self.rule(fd, rights if directory else rights & _FILE_RIGHTS)))
        self.program = None if program is None else self._seccomp_program(_ctypes, program)

    def close(self) -> None:
        """Close the rules' descriptors (the rulesets made from them keep what they need)."""
        for fd, _ in self.rules:
            os.close(fd)

    def rule(self, fd: int, rights: int) -> bytes:
        return (rights & self.handled_fs).to_bytes(8, sys.byteorder) + fd.to_bytes(4, sys.byteorder, signed=True)

    def _landlock_abi(self) -> int:
        try:
            return self.call("syscall", _CREATE_RULESET, 0, 0, _LANDLOCK_CREATE_RULESET_VERSION)
        except OSError:
            return 0

    def _seccomp_program(self, _ctypes, code: bytes) -> tuple[object, bytes]:
        """The filter in memory of its own, and the sock_fprog that points at it."""

        class Char(_ctypes._SimpleCData):
            _type_ = "c"

        buffer = type("Filter", (_ctypes.Array,), {"_type_": Char, "_length_": len(code)}).from_buffer_copy(code)
        length = (len(code) // 8).to_bytes(2, sys.byteorder)
        return buffer, length + bytes(6) + _ctypes.addressof(buffer).to_bytes(8, sys.byteorder)


def _python_paths() -> list[str]:
    """Where this interpreter loads Python from: its prefixes and every directory on sys.path."""
    return [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *(entry for entry in sys.path if entry)]


def _beneath_none(paths: list[str]) -> list[str]:
    """The paths that lie beneath none of the others (one rule covers those)."""
    found = sorted({os.path.normpath(path) for path in paths})
    kept: list[str] = []
    for path in found:  # sorted: a directory comes before what lies beneath it
        if not any(path == top or path.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(path)
    return kept


_libc: list[object] = []


def libc():
    """call(name, *arguments): libc's `name` on int arguments that fit a C int and bytes arguments (bytes:
    a pointer to them), returning its C long result, or raising OSError with errno where it returns -1.

    _ctypes alone costs ~0.3 ms where `import ctypes` costs ~1.6 ms; the child loads it before the
    import guards take it out of sys.modules (guard.py)."""
    if _libc:
        return _libc[0]
    import _ctypes

    class Long(_ctypes._SimpleCData):
        _type_ = "l"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Long

    class Libc:
        _handle = _ctypes.dlopen(None)

    functions: dict[str, object] = {}

    def call(name: str, *arguments: int | bytes) -> int:
        if name not in functions:
            functions[name] = Function((name, Libc))
        # An int argument goes as a C int, which libffi sign-extends to the register's 64 bits: every
        # one here (numbers, flags, descriptors) fits; a pointer goes inside bytes.
        result = functions[name](*arguments)
        if result == -1:
            code = _ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return result

    _libc.append(call)
    return call


_SIOCSIFFLAGS, _IFF_UP, _IFF_LOOPBACK, _AF_INET, _SOCK_DGRAM = 0x8914, 0x1, 0x8, 2, 2


def loopback_up() -> None:
    """Bring up the loopback of the network namespace this process has just made (the relaxed posture):
    with it a candidate's servers on 127.0.0.1 are reachable by its own clients, and by nothing else.
    OSError if the kernel refuses."""
    call = libc()
    fd = call("socket", _AF_INET, _SOCK_DGRAM, 0)
    try:
        request = b"lo".ljust(16, b"\0") + (_IFF_UP | _IFF_LOOPBACK).to_bytes(2, sys.byteorder) + bytes(22)
        call("ioctl", fd, _SIOCSIFFLAGS, request)
    finally:
        os.close(fd)


def missing(protections: dict[str, str], pid_namespace: str, sandbox: str) -> list[str]:
    """The protections the settings ("auto", "require", "off") require that are not on, with why."""
    return [
        f"{name} ({state})"
        for name, state in protections.items()
        if state != "on" and (pid_namespace if name == "pid_namespace" else sandbox) == "require"
    ]


def private_scratch() -> bool:
    """Make SCRATCH this process's own (and its forks'): a new mount namespace, whose mounts no longer
    propagate to or from the host's, with an empty tmpfs on SCRATCH. Only in a user namespace this process
    has just made (its capabilities are that namespace's, over nothing of the host's). Whether it is made:
    where the kernel refuses, SCRATCH stays the host's, and no rule lets a candidate write it."""
    call = libc()
    try:
        call("unshare", _CLONE_NEWNS)
        call("mount", b"none", b"/", 0, _MS_REC | _MS_PRIVATE, 0)
        call("mount", b"tmpfs", SCRATCH.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=256m,mode=0700")
    except OSError:
        return False
    return True


def prepare(setting: str, program: bytes | None, posture: str = "strict", toolchains: tuple = ()) -> Plan | str:
    """The plan, or the state every protection of it is in: "off" (the setting), "refused: <why>".
    `program`: seccomp_filter()'s; `posture`: "strict", "relaxed" (whose SCRATCH is made private here:
    private_scratch(), after the namespaces, before the filter that refuses mount) or "programs", with its
    `toolchains`."""
    if setting == "off":
        return "off"
    try:
        return Plan(program, posture, tuple(toolchains), posture == "relaxed" and private_scratch())
    except (ImportError, OSError) as exc:
        return f"refused: {exc}"


def path_parts(path: str) -> list | None:
    """The components of a path below a directory, or None if it is not one (absolute, empty, a '..', a
    NUL): for the host's files of a working directory (worker/process/workfiles.py) and a runner's of
    SCRATCH (forked_runs.py) alike."""
    if not path or path.startswith("/") or "\0" in path:
        return None
    found = [part for part in path.split("/") if part not in ("", ".")]
    return found if found and ".." not in found else None


def open_below(directory: str, parts: list) -> int:
    """A descriptor of the file that `parts` (path components) name below `directory`, each component opened
    with O_NOFOLLOW: no symbolic link a candidate left on the way is followed, whoever opens it (a runner
    outside its test's Landlock domain, the host). Raises OSError: not there, a link, not a directory."""
    opened = [os.open(directory, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for part in parts[:-1]:
            opened.append(os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=opened[-1]))
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=opened[-1])
    finally:
        for fd in opened:
            os.close(fd)


def clear_scratch(plan: Plan | str) -> None:
    """Empty SCRATCH where it is private: before each candidate, what the one before it left goes."""
    if isinstance(plan, Plan) and plan.scratch:
        empty(SCRATCH)


def keep_scratch(paths: list) -> None:
    """Copy the files of SCRATCH named by `paths` (absolute, below it) into SCRATCH_COPY of the working
    directory, where the host reads the files it fetches: SCRATCH is this process's mount namespace's, out
    of the host's sight. The tests' runner (forked_runs.py) does it, outside the test's Landlock domain: a
    link the test left must lead it nowhere (open_below()); what is not a regular file is left out."""
    for path in paths:
        found = path_parts(path[len(SCRATCH) + 1 :])
        if found is None:
            continue
        opened = []
        try:
            opened.append(open_below(SCRATCH, found))
            if os.fstat(opened[0]).st_mode & 0o170000 != 0o100000:  # S_ISREG
                continue
            directory = os.path.join(SCRATCH_COPY, SCRATCH.strip("/"), *found[:-1])
            os.makedirs(directory, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            opened.append(os.open(os.path.join(directory, found[-1]), flags))
            while os.sendfile(opened[1], opened[0], None, 1 << 30):
                pass
        except OSError:  # not there, not a directory on the way, a link
            pass
        finally:
            for fd in opened:
                os.close(fd)


def empty(directory: str) -> None:
    """Remove what is in `directory` (what cannot be removed stays)."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    empty(entry.path)
                    os.rmdir(entry.path)
                else:
                    os.unlink(entry.path)
    except OSError:
        pass


def restrict_calls(plan: Plan | str) -> str:
    """Attach the seccomp filter to this process, and so to every process it starts from now on; the
    state of "syscalls". Also sets no_new_privs, which Landlock needs too."""
    if isinstance(plan, str):
        return plan
    try:
        plan.call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except OSError as exc:
        return f"refused: prctl(PR_SET_NO_NEW_PRIVS): {exc}"
    if plan.program is None:
        return f"refused: codeexec has no system call table for {plan.machine} (it has one for x86_64)"
    try:
        plan.call("syscall", _SECCOMP[plan.machine], 1, 0, plan.program[1])  # SECCOMP_SET_MODE_FILTER
    except OSError as exc:
        return f"refused: {exc}"
    return "on"


def ruleset(plan: Plan | str, workdir: str) -> int | str:
    """A Landlock ruleset of the plan's rules and read-write access to `workdir`, for one candidate: made
    in the process its own is forked from (a warm one: done in the candidate's, the same calls would
    copy the pages they touch). Its descriptor, or the state of "filesystem" and "signals"."""
    if isinstance(plan, str):
        return plan
    if plan.abi <= 0:
        return "refused: Landlock is not available (a kernel older than 5.13, or not enabled at boot)"
    size = 8 if plan.abi < 4 else 16 if plan.abi < 6 else 24
    attr = b"".join(v.to_bytes(8, sys.byteorder) for v in (plan.handled_fs, plan.handled_net, plan.scoped))
    call, add = plan.call, _ADD_RULE
    try:
        made = call("syscall", _CREATE_RULESET, attr[:size], size, 0)
    except OSError as exc:
        return f"refused: {exc}"
    try:
        where = os.open(workdir, os.O_PATH | os.O_CLOEXEC)
        try:
            call("syscall", add, made, _RULE_PATH_BENEATH, plan.rule(where, plan.workdir_rights), 0)
        finally:
            os.close(where)
        for _, rule in plan.rules:
            call("syscall", add, made, _RULE_PATH_BENEATH, rule, 0)
    except OSError as exc:
        os.close(made)
        return f"refused: {exc}"
    return made


def confine(plan: Plan | str, rules: int | str) -> dict[str, str]:
    """In the candidate's own process: add read access to its own /proc/<pid> to the ruleset (`rules`:
    ruleset()'s), restrict this process and all it starts to it, and close it; then drop every
    capability (after: without no_new_privs, Landlock needs CAP_SYS_ADMIN). The states of
    "filesystem", "signals" and "capabilities"."""
    return {**_landlock(plan, rules), "capabilities": _drop_capabilities(plan)}


def confined(plan: Plan | str, rules: int | str) -> dict[str, str]:
    """The states confine() gives where the kernel takes its calls: what a process that confines each
    process it forks rather than itself reports (worker/candidate/forked_runs.py)."""
    capabilities = plan if isinstance(plan, str) else "on"
    if isinstance(rules, str):
        return {"filesystem": rules, "signals": rules, "capabilities": capabilities}
    assert isinstance(plan, Plan)
    return {"filesystem": "on", "signals": _signals(plan), "capabilities": capabilities}


def _signals(plan: Plan) -> str:
    return "on" if plan.scoped else f"refused: Landlock ABI {plan.abi} has no signal scope (6 has)"


def _drop_capabilities(plan: Plan | str) -> str:
    if isinstance(plan, str):
        return plan
    try:
        plan.call("capset", *_NO_CAPABILITIES)
    except OSError as exc:
        return f"refused: capset: {exc}"
    return "on"


def _landlock(plan: Plan | str, rules: int | str) -> dict[str, str]:
    if isinstance(rules, str):
        return {"filesystem": rules, "signals": rules}
    assert isinstance(plan, Plan)
    try:
        own = os.open("/proc/self", os.O_PATH | os.O_CLOEXEC)
        try:
            plan.call("syscall", _ADD_RULE, rules, _RULE_PATH_BENEATH, plan.rule(own, plan.proc_rights), 0)
        finally:
            os.close(own)
        plan.call("syscall", _RESTRICT_SELF, rules, 0)
    except OSError as exc:
        why = f"refused: {exc}"
        return {"filesystem": why, "signals": why}
    finally:
        os.close(rules)
    return {"filesystem": "on", "signals": _signals(plan)}
