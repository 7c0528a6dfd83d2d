"""stdin/stdout tests: the program as a script on each test's input, in a process of its own per test.
Loaded by path in the candidate's interpreter (worker/candidate/__init__.py); child.py's main() calls
run_tests() with `stdio` (worker/judging/kinds/stdin.py builds it), in the candidate's own process.

That process runs no line of the program itself: it is the tests' *runner*. It runs the mode's prelude and
compiles the program once, then for each test forks a process that runs the compiled program as Python runs
a script (as __main__, in its own copy of the prelude's namespace), on a standard input that is a file
holding the test's input (input(), sys.stdin, sys.stdin.buffer, open(0) and seek() all work), printing to
pipes of the runner's. The runner reads what it prints, charges its time, ends it and everything it
started, empties the working directory, and tells the host in a "test" record (child.py); the host
compares the output and answers whether to go on. Nothing is judged here.

Why a fork of the runner, not a process from the host a test: the fork is all a test costs (the program
compiled, the prelude's modules and namespace made once), ~3 ms against ~10 ms, and no test reaches another:

- the runner confines each test's process (Landlock, no capabilities: confine()) before it runs a line
  of the program, and stays outside that domain itself, so no test can signal or trace it or read its
  /proc, while it can read each test's CPU-wait figure there (worker/process/timelimit.py says why
  that, not the wall clock, is what a test is charged);
- once a test's process has ended, every other process of the PID namespace is killed (kill(-1) spares
  only the namespace's init and the caller: the kernel never lets a fork escape it), and the next test
  waits until they are gone (a killed process lets go of its files, its locks, as it exits, and the init
  reaps it: kill() returns before either); or without a namespace, the test's process group: a process
  that left it may outlive its test (docs/security.md);
- what a test wrote in the working directory is removed before the next starts.

    stdio = {"prelude": code, "inputs": marshal data of [bytes, ...], "limit": s, "caps": [bytes, ...],
             "stderr_cap": bytes, "budget": s, "ceiling": factor, "script": None or {"file": name, "pytest": bool}}

limit: seconds a test may be charged; caps: what each may print; budget: seconds all of them may be charged
together; ceiling: the wall-clock time a test may take, as a multiple of its limit.

steps (programs in other languages: worker/judging/kinds/program.py, run_steps()): no Python runs in the tests'
processes. Each step is a command the test's process executes once confined, in the working directory
holding the program's file: a compiler, then what it made, or an interpreter on the file. A step's
outcome is its exit status; the host answers whether to run the next (not after a failed compile).

    steps = {"steps": [{"argv": [path, ...], "env": {name: value}, "limit": s, "cap": bytes,
                        "data_bytes": bytes or None, "stdin": bytes}, ...], "stderr_cap": bytes, "ceiling": factor}

argv[0] is the command's absolute path; env is added to the runner's environment ("{dir}": the working
directory's absolute path); data_bytes, the step's RLIMIT_DATA (RLIMIT_AS breaks the JVM, Node and Go, which
reserve address space up front); stdin, its standard input; limit, cap and ceiling as for stdio.

script (the HTTP service's /run_code: worker/judging/kinds/script.py): the program is a file the host wrote in
the working directory with the request's files; its one test runs it as `python FILE` (or `pytest FILE`)
would, to the letter a client can see: sys.argv, __file__, the file's directory first on sys.path, a
traceback (a syntax error's too) on stderr and status 1, SystemExit's status. Its stderr is sent to the
host as its stdout is, and the working directory left as the program left it, for the host's fetch.
"""

import builtins
import gc
import marshal
import os
import select
import sys
import time
from _signal import SIGKILL

from failures import describe, flush_output, limit_hit, message_of
from sandbox import confine, empty, keep_scratch

# Bound now, before any candidate code runs, so a candidate that reassigns them changes nothing here.
_fork, _write, _read, _close, _pread, _listdir = os.fork, os.write, os.read, os.close, os.pread, os.listdir
_monotonic_ns, _kill, _killpg, _getpid, _exit = time.monotonic_ns, os.kill, os.killpg, os.getpid, os._exit

_READ = 1 << 16
_RESULT_BYTES = 4096
_LOOKS = 10  # a test's threads' figures are read this many times in its limit, and at each deadline
_PROCESSES = 64  # the most of a test's processes whose threads' figures are read at a look (a fork bomb's are not)
# How long the next test waits for the processes a test left to be gone once killed (a process stuck in the
# kernel dies when it leaves it), and how often it looks.
_GONE_S, _GONE_LOOK_S = 10.0, 0.0005


def run_tests(
    candidate: str, stdio: dict, contained: bool, sandbox: tuple, starting, report
) -> tuple[str, str, str | None]:
    """Run the program on each test's input in turn; `starting(index)` sends a test's "starting" record
    (child.py) before its fork, `report(index, ended, detail, (stdout, stderr), status, ns, began, clock)`
    its "test" record once it is gone, and says whether the host wants the next. `contained`: this process
    is the PID namespace's second (child.py). `sandbox`: (plan, rules, states) for confine(), and the states
    it is to give. (outcome, detail, message) of the whole: "pass" once the tests the host wanted (or the
    budget allowed) have run; "syntax_error": the program does not compile; "error": the prelude failed."""
    try:
        namespace = prelude_namespace(stdio["prelude"])
    except BaseException as exc:  # a prelude module the interpreter lacks
        return "error", "the prelude failed: " + describe(exc), message_of(exc)
    script = stdio.get("script")
    try:  # a script's own process compiles it, as Python does: its syntax error is the program's
        code = script or compile(candidate, "<string>", "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
        return "syntax_error", describe(exc), message_of(exc)
    except BaseException as exc:  # MemoryError, RecursionError: too deep to compile
        return "error", limit_hit(exc) or describe(exc), message_of(exc)
    # What the forks inherit, the collector of each need never look at (it would write to every page).
    gc.freeze()
    own_wait = _figure("/proc/thread-self/schedstat")
    charged = 0
    for index, given in enumerate(marshal.loads(stdio["inputs"])):
        left = stdio["budget"] * 1e9 - charged
        if left <= 0:
            break
        limit = min(stdio["limit"] * 1e9, left)
        if index:  # what the last test wrote goes before anything of this one exists
            empty(".")
        test = _Test(limit, stdio["ceiling"] * limit, stdio["caps"][index], stdio["stderr_cap"], own_wait, bool(script))
        starting(index)
        ended, detail, status = test.run(code, namespace, given, contained, sandbox)
        charged += test.charged
        if script and script.get("scratch"):
            keep_scratch(script["scratch"])
        if not test.report(report, index, ended, detail, status):
            break
    if own_wait is not None:
        _close(own_wait)
    return "pass", "", None


def run_steps(steps: dict, contained: bool, sandbox: tuple, starting, report) -> tuple[str, str, None]:
    """Run each of `steps`' commands in turn, in a confined process of its own, while the host wants the
    next; `starting` and `report` as for run_tests(). ("pass", "", None) once they have run: the host judges them."""
    own_wait = _figure("/proc/thread-self/schedstat")
    for index, step in enumerate(steps["steps"]):
        limit = step["limit"] * 1e9
        test = _Test(limit, steps["ceiling"] * limit, step["cap"], steps["stderr_cap"], own_wait, True)
        starting(index)
        ended, detail, status = test.run(step, {}, step["stdin"], contained, sandbox)
        if not test.report(report, index, ended, detail, status):
            break
    if own_wait is not None:
        _close(own_wait)
    return "pass", "", None


#: The namespace each prelude made, by its text: a zygote's, made before its first fork (warm.py).
_made: dict[str, dict[str, object]] = {}


def prelude_namespace(prelude: str) -> dict[str, object]:
    """The namespace `prelude` makes, run once in this process (or in the zygote it was forked from): each
    test's process runs the program in its own copy of it. Raises what the prelude raised."""
    if prelude not in _made:
        namespace: dict[str, object] = {"__name__": "__main__", "__builtins__": builtins}
        exec(prelude, namespace)
        _made[prelude] = namespace
    return _made[prelude]


class _Test:
    """One test's process, from its fork to its end, and what it came to."""

    def __init__(
        self, limit: float, ceiling: float, cap: int, stderr_cap: int, own_wait: int | None, keep_stderr: bool
    ) -> None:
        self.limit, self.ceiling, self.own_wait = limit, ceiling, own_wait
        # A script's stderr is the host's to send on; a stdin test's is only counted (the program's own
        # account says what went wrong).
        self.out = _Stream(cap, keep=True, overflow="output overflow")
        self.err = _Stream(stderr_cap, keep=keep_stderr, overflow="output overflow (stderr)")
        self.charged = self.began = self.ended = 0  # ns
        self.wait: int | None = None  # the test's schedstat, open
        self.seen_as = self.threads_waited = 0  # its pid in /proc; its threads' most wait for a CPU, ns
        self.forgiven = 0  # ns this thread waited for a CPU in wake-ups that found a pipe of the test's full

    def run(self, code, namespace: dict, given: bytes, contained: bool, sandbox: tuple) -> tuple[str, str, int | None]:
        """Fork the test's process, watch it to its end, and clean up after it: (ended, detail, status), ended
        being "pass" or "error" (the program's own account: run_script()), "limit" (time), "output" (a cap),
        or "killed" (it ended without an account, by a signal or an exit status other than 0); status the
        one it ended with (os.waitstatus_to_exitcode()), None where it was stopped ("limit", "output")."""
        stdin = os.memfd_create("stdin")
        _write_all(stdin, given)
        os.lseek(stdin, 0, os.SEEK_SET)
        self.out.fd, out_w = os.pipe()
        self.err.fd, err_w = os.pipe()
        result_r, result_w = os.pipe()
        for fd in (self.out.fd, self.err.fd, result_r):  # ours, read only what is there: the program's ends block
            os.set_blocking(fd, False)
        self.began = _monotonic_ns()
        pid = _fork()
        if pid == 0:
            _test_process(code, namespace, (stdin, out_w, err_w, result_w), contained, sandbox)
        for fd in (stdin, out_w, err_w, result_w):
            _close(fd)
        pidfd = os.pidfd_open(pid)
        seen_as = self.seen_as = pid_in_proc(pidfd)
        self.wait = _figure(f"/proc/{seen_as}/task/{seen_as}/schedstat")
        try:
            ended, detail = self._watch(pidfd)
            # Read while the process is unreaped: its figure goes with it.
            self.ended = _monotonic_ns()
            self.charged = self._charge(self.ended)
            if ended is None and self.charged > self.limit:  # it ended, but past its time: we were late to look
                ended = "limit"
            if ended == "limit":
                detail = f"timed out after {self.limit / 1e9:g} s"
        finally:
            # Everything the test started goes with it, before anything of the next test exists.
            try:
                _kill(-1, SIGKILL) if contained else _killpg(pid, SIGKILL)
            except OSError:  # nothing left
                pass
            _, status = os.waitpid(pid, 0)
            if contained:
                _all_gone()
            for fd in (pidfd, *([self.wait] if self.wait is not None else [])):
                _close(fd)
        for stream in (self.out, self.err):
            if ended is None and not stream.read(drain=True):
                ended, detail = "output", stream.overflow
        stopped = ended is not None
        if ended is None:
            ended, detail = _account(result_r, status)
        for fd in (self.out.fd, self.err.fd, result_r):
            _close(fd)
        return ended, detail, None if stopped else os.waitstatus_to_exitcode(status)

    def report(self, report, index: int, ended: str, detail: str, status: int | None) -> bool:
        """Send the host what the test printed, then its "test" record (`report`); whether to run the next."""
        _write_all(1, self.out.data)  # the "test" record says how much of it is this test's
        _write_all(2, self.err.data)
        lengths = (len(self.out.data), len(self.err.data))
        return report(index, ended, detail, lengths, status, self.charged, self.began, self.ended)

    def _watch(self, pidfd: int) -> tuple[str | None, str]:
        """Read the test's output until its process ends, (None, ""), or is to be stopped: ("limit", ""),
        ("output", why)."""
        poller = select.poll()
        for fd in (pidfd, self.out.fd, self.err.fd):
            poller.register(fd, select.POLLIN)
        streams = {self.out.fd: self.out, self.err.fd: self.err}
        deadline, look = self.began + self.limit, self.began + self.limit // _LOOKS
        while True:
            now = _monotonic_ns()
            if now >= min(deadline, look):  # often: a thread's figure goes with it, before its process ends
                self.threads_waited = max(self.threads_waited, self._most_waited())
                look = now + self.limit // _LOOKS
            if now >= deadline:
                owed = self.limit - self._charge(now)
                if owed <= 0 or now - self.began >= self.ceiling:
                    return "limit", ""
                # It is charged at most a second a second: it cannot be out of time before then.
                deadline = min(now + owed, self.began + self.ceiling)
                continue
            asleep = _waited(self.own_wait)
            for fd, _ in poller.poll((min(deadline, look) - now) / 1e6 + 1):
                if fd == pidfd:  # it has ended (unreaped)
                    return None, ""
                before = streams[fd].count
                if not streams[fd].read():
                    return "output", streams[fd].overflow
                if streams[fd].count - before >= _READ and asleep is not None:  # full: its writer may have waited
                    awake = _waited(self.own_wait)
                    self.forgiven += (awake or asleep) - asleep
                    asleep = awake
                if not streams[fd].open:
                    poller.unregister(fd)

    def _charge(self, now: int) -> int:
        """ns charged by `now`: the wall-clock time since the fork (where the kernel gives figures) less the wait
        for a CPU of the test's thread that waited most (its main thread's now, the others' and those of the
        processes it started as last read, each tenth of its limit and at deadlines: a JVM's main thread waits
        for the one running the program, a compiler driver for its compiler) and this thread's own in wake-ups
        to a full pipe of the test's (its writer may have waited for its reader, late: `forgiven`; only then,
        or a sleeper would be forgiven every late look at its deadline)."""
        return max(0, now - self.began - self.forgiven - max(_waited(self.wait) or 0, self.threads_waited))

    def _most_waited(self) -> int:
        """ns the thread that has waited most for a CPU has waited, of the test's process and of the first
        _PROCESSES it started (a compiler driver waits for its compiler: g++ for cc1plus; 0: none to read)."""
        most, processes = 0, [self.seen_as]
        for pid in processes:  # each process's children join the list as it is read
            try:
                tasks = _listdir(f"/proc/{pid}/task")
            except OSError:  # it has ended
                continue
            for task in tasks:
                figure = _figure(f"/proc/{pid}/task/{task}/schedstat")
                most = max(most, _waited(figure) or 0)
                if figure is not None:
                    _close(figure)
                if len(processes) < _PROCESSES:  # past the bound, no children file is opened
                    processes += _children(f"/proc/{pid}/task/{task}/children")[: _PROCESSES - len(processes)]
        return most


class _Stream:
    """One of a test's output pipes (its `fd`, set once made), read as the test writes: what it wrote, kept
    up to its cap where it is kept (what the host is sent stays within it), and whether it went over."""

    def __init__(self, cap: int, keep: bool, overflow: str) -> None:
        self.cap, self.keep, self.overflow = cap, keep, overflow  # overflow: the detail of a test over the cap
        self.fd, self.data, self.count, self.open = -1, b"", 0, True

    def read(self, drain: bool = False) -> bool:
        """One read (or with `drain`, all that is there); False once the test has written over the cap."""
        while self.open:
            try:
                chunk = _read(self.fd, _READ)
            except BlockingIOError:
                break
            self.open = bool(chunk)
            self.count += len(chunk)
            if self.keep:
                self.data += chunk[: self.cap - len(self.data)]
            if self.count > self.cap:
                return False
            if not drain:
                break
        return True


def _test_process(code, namespace: dict, fds: tuple[int, int, int, int], contained: bool, sandbox: tuple) -> None:
    """In the test's process: its descriptors, its sandbox, then the program; never returns.

    It writes one account of itself to its result pipe, "<ended>\\n<detail>": run_script()'s outcome
    and detail (run_file()'s, for a script, which also ends the process with the program's status). A
    process forked from it runs on to here too, and ends without writing one."""
    status = 0
    try:
        stdin, out_w, err_w, result_w = fds
        os.dup2(stdin, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        if not contained:
            os.setpgid(0, 0)  # what the runner kills after it
        plan, rules, states = sandbox
        confined = confine(plan, rules)
        os.closerange(3, result_w)
        os.closerange(result_w + 1, 1 << 20)
        if confined != states:  # the runner told the host these were in place: nothing runs without them
            differ = ", ".join(f"{name} {state}" for name, state in confined.items() if states.get(name) != state)
            _write(result_w, f"error\nthe test's process could not be confined: {differ}".encode())
            _exit(0)
        me = _getpid()
        if isinstance(code, dict) and "argv" in code:
            execute_step(code, result_w)
        if isinstance(code, dict):
            outcome, detail, status = run_file(code["file"], code["pytest"])
        else:
            # The runner's namespace itself: this process's copy of it is its own, and copying it would
            # write to every page its values lie on (~1 ms).
            outcome, detail = run_script(code, namespace)
        flush_output()
        if _getpid() == me:
            _write(result_w, f"{outcome}\n{detail}".encode("utf-8", "replace")[:_RESULT_BYTES])
    finally:
        _exit(status)


def execute_step(step: dict, result_w: int) -> None:
    """Become the step's command (run_steps()); where it cannot be executed, say so and end with status 127,
    as a shell does. Its status is its account: the result pipe closes as it is executed."""
    if step["data_bytes"] is not None:
        import resource  # this process's only: the runner never loads it

        resource.setrlimit(resource.RLIMIT_DATA, (step["data_bytes"], step["data_bytes"]))
    here = os.getcwd()
    env = {name: value.replace("{dir}", here) for name, value in step["env"].items()}
    try:
        os.execve(step["argv"][0], step["argv"], {**os.environ, **env})
    except OSError as exc:
        _write(result_w, f"error\ncould not run {step['argv'][0]}: {exc.strerror}".encode("utf-8", "replace"))
        _exit(127)


def run_file(file: str, pytest: bool) -> tuple[str, str, int]:
    """(outcome, detail, status) of running the program file of the working directory as `python FILE`
    runs it, or `pytest FILE` with `pytest`: what it prints on the way out, in Python's order (the
    traceback or SystemExit's text, then its threads and atexit functions), and the status it ends with."""
    path = os.path.join(os.getcwd(), file)
    if pytest:  # the console script's own directory heads sys.path, not the file's: pytest puts that there
        sys.argv = ["pytest", path]
    else:
        sys.argv = [path]
        sys.path.insert(0, os.path.dirname(path))
    try:
        try:
            if pytest:
                from pytest import console_main

                raise SystemExit(console_main())
            with open(path, "rb") as source:
                code = compile(source.read(), path, "exec")
            exec(code, {"__name__": "__main__", "__file__": path, "__cached__": None, "__builtins__": builtins})
        except SystemExit as exc:
            status = exc.code
            if status is None or isinstance(status, int):
                status = (status or 0) & 0xFF
            else:  # Python prints any other value, and exits with 1
                print(status, file=sys.stderr)
                status = 1
            outcome, detail = ("pass", "") if status == 0 else ("error", f"SystemExit: {status}")
        except BaseException as exc:
            # As Python prints it: the traceback from the program's first frame (this one is not its), or a
            # syntax error's lines alone.
            exc = exc.with_traceback(exc.__traceback__.tb_next if exc.__traceback__ else None)
            sys.excepthook(type(exc), exc, exc.__traceback__)
            outcome, detail, status = "error", limit_hit(exc) or describe(exc), 1
        finally:
            flush_output()
            at_exit()
    except BaseException as exc:  # raised while waiting for its threads, or by the hook
        return "error", describe(exc), 1
    return outcome, detail, status


def run_script(code, namespace: dict) -> tuple[str, str]:
    """(outcome, detail) of running the program as a script: "pass" when it ends, or exits with status 0;
    "error" with detail "SystemExit: <status>" for another status (the judge's mode decides)."""
    try:
        try:
            exec(code, namespace)
        finally:
            at_exit()
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            return "pass", ""
        return "error", f"SystemExit: {message_of(exc)}"
    except BaseException as exc:
        return "error", limit_hit(exc) or describe(exc)
    return "pass", ""


def at_exit() -> None:
    """What the interpreter does when a script ends: wait for its threads, then run its atexit functions
    (a module the program never imported has none to wait for)."""
    threading = sys.modules.get("threading")
    if threading is not None:
        current = threading.current_thread()
        for thread in threading.enumerate():
            if thread is not current and not thread.daemon:
                thread.join()
    atexit = sys.modules.get("atexit")
    if atexit is not None:
        atexit._run_exitfuncs()


def _account(result_r: int, status: int) -> tuple[str, str]:
    """What the test's process said of itself (run_script()), or how it ended without saying."""
    try:
        said = _read(result_r, _RESULT_BYTES)
    except BlockingIOError:
        said = b""
    ended, _, detail = said.decode("utf-8", "replace").partition("\n")
    if ended in ("pass", "error"):
        return ended, detail
    code = os.waitstatus_to_exitcode(status)
    if code == 0:  # it ended as a script may, os._exit(0): what it printed is judged
        return "pass", ""
    if code < 0:
        return "killed", f"the program was killed by signal {-code}"
    return "killed", f"the program exited with status {code}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_write(fd, view) :]


def _figure(path: str) -> int | None:
    """A descriptor of a /proc file (a schedstat, a children), or None where there is none to read."""
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def _waited(fd: int | None) -> int | None:
    """ns its thread has waited for a CPU (schedstat's second field), or None."""
    if fd is None:
        return None
    try:
        return int(_pread(fd, 128, 0).split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _all_gone() -> None:
    """Return once the PID namespace holds no process but its init and this one (those kill(-1) reaches:
    a process killed but still exiting, or exited and not yet reaped by the init), or after _GONE_S."""
    deadline = _monotonic_ns() + _GONE_S * 1_000_000_000
    while _monotonic_ns() < deadline:
        try:
            _kill(-1, 0)
        except ProcessLookupError:  # no one left
            return
        time.sleep(_GONE_LOOK_S)


def _children(path: str) -> list[int]:
    """The pids a thread's children file lists: the processes it started that have not ended (none where
    it has ended)."""
    listed = _figure(path)
    if listed is None:
        return []
    try:
        return [int(pid) for pid in _pread(listed, 4096, 0).split()]
    except (OSError, ValueError):
        return []
    finally:
        _close(listed)


def pid_in_proc(pidfd: int) -> int:
    """The pid of pidfd's process in the PID namespace /proc belongs to (the host's): its fdinfo says."""
    info = os.open(f"/proc/self/fdinfo/{pidfd}", os.O_RDONLY)
    try:
        text = _read(info, 4096)
    finally:
        _close(info)
    return int(text.split(b"\nPid:\t", 1)[1].split(b"\n", 1)[0])
