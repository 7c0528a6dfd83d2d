"""The sandbox's system call filter (seccomp-bpf): which calls a candidate's processes are refused, as the
program the kernel runs for each call. The host builds it (seccomp_filter(), once per process) and hands
its bytes to the process that attaches it (worker/candidate/sandbox.py, restrict_calls()): a fresh
candidate's interpreter, or a zygote before its first fork. worker/candidate/sandbox.py's docstring says
what it refuses, and why.
"""

import os
import sys

_AUDIT_ARCH = {"x86_64": 0xC000003E}
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers, refused whole
#: Calls a candidate is refused (EPERM), by name and x86_64 number.
FILTERED = {
    "execve": 59,
    "execveat": 322,
    "uselib": 134,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "kcmp": 312,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "open_tree_attr": 467,
    "bpf": 321,
    "perf_event_open": 298,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "userfaultfd": 323,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "fanotify_init": 300,
    "syslog": 103,
    "acct": 163,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "quotactl": 179,
    "quotactl_fd": 443,
    "iopl": 172,
    "ioperm": 173,
}
_CLONE, _CLONE3, _SOCKET, _SOCKETPAIR, _UNSHARE, _SETNS = 56, 435, 41, 53, 272, 308
_CLONE_NEWPID = 0x20000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97


_filters: dict[tuple[str, bool], bytes | None] = {}
#: What the relaxed and programs postures let a candidate call that FILTERED refuses.
RELAXED_CALLS = ("execve", "execveat")


def seccomp_filter(execs: bool = False) -> bytes | None:
    """This machine's _program() (of the relaxed and programs postures', with `execs`), built once per
    process: the host's, for every candidate's child."""
    key = (os.uname().machine, execs)
    if key not in _filters:
        _filters[key] = _program(*key)
    return _filters[key]


def _program(machine: str, execs: bool = False) -> bytes | None:
    """The seccomp-bpf filter for this machine (os.uname().machine), as struct sock_filter[] (code u16, jt
    u8, jf u8, k u32); None where codeexec has no system call table for it. `execs`: without
    RELAXED_CALLS among the refused.

    The calls it judges are found by a binary search on the call's number, not a list of comparisons:
    the kernel runs the filter for every number when it is attached, to cache which calls it always
    allows, and that costs every candidate time in proportion to the path an allowed call takes."""
    load, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    if machine not in _AUDIT_ARCH:
        return None
    arch = _AUDIT_ARCH[machine]
    allow, kill = 0x7FFF0000, 0x80000000  # SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS

    def errno(number: int) -> int:
        return 0x00050000 | number  # SECCOMP_RET_ERRNO

    nr, arch_at, arg0, arg1 = 0, 4, 16, 24  # offsets in struct seccomp_data (an argument's low half)
    judged = sorted(
        [(number, "deny") for name, number in FILTERED.items() if not (execs and name in RELAXED_CALLS)]
        + [(_CLONE, "clone"), (_CLONE3, "nosys"), (_SOCKET, "socket"), (_SOCKETPAIR, "socketpair")]
        + [(_UNSHARE, "unshare"), (_SETNS, "setns")]
    )
    # (label, code, k, label if true, label if false); None: the next instruction.
    program: list[tuple[str | None, int, int, str | None, str | None]] = [
        (None, load, arch_at, None, None),
        (None, jeq, arch, None, "kill"),
        (None, load, nr, None, None),
        (None, jge, _X32_BIT, "deny", None),
    ]

    def search(entries: list[tuple[int, str]], label: str | None) -> None:
        if len(entries) == 1:
            number, action = entries[0]
            program.append((label, jeq, number, action, "allow"))
            return
        middle = len(entries) // 2
        upper = f"from {entries[middle][0]}"
        program.append((label, jge, entries[middle][0], upper, None))
        search(entries[:middle], None)
        search(entries[middle:], upper)

    search(judged, None)
    program += [
        ("clone", load, arg0, None, None),
        (None, jset, _NAMESPACE_FLAGS, "deny", "allow"),
        ("unshare", load, arg0, None, None),
        (None, jeq, _CLONE_NEWPID, "allow", "deny"),
        ("setns", load, arg1, None, None),
        (None, jeq, _CLONE_NEWPID, "allow", "deny"),
        ("socket", load, arg0, None, None),
        (None, jeq, _AF_INET, "allow", None),
        (None, jeq, _AF_INET6, "allow", "family"),
        # A pair of unnamed sockets reaches nothing but itself, whatever its type (Rust's Command sends a
        # pidfd over a SOCK_SEQPACKET pair).
        ("socketpair", load, arg0, None, None),
        (None, jeq, _AF_UNIX, "allow", "family"),
        ("allow", ret, allow, None, None),
        ("deny", ret, errno(_EPERM), None, None),
        ("nosys", ret, errno(_ENOSYS), None, None),
        ("family", ret, errno(_EAFNOSUPPORT), None, None),
        ("kill", ret, kill, None, None),
    ]
    at = {label: index for index, (label, *_) in enumerate(program) if label}
    code = b""
    for index, (_, op, k, if_true, if_false) in enumerate(program):
        jt, jf = ((at[target] - index - 1 if target else 0) for target in (if_true, if_false))
        code += op.to_bytes(2, sys.byteorder) + bytes((jt, jf)) + k.to_bytes(4, sys.byteorder)
    return code
