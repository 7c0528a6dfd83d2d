"""BigCodeBench 0.2.5's harness, as its tasks meet it (testfile.py sets it up for the bigcodebench harness).

Its unsafe_execute (bigcodebench/eval/__init__.py) runs a task inside safe_environment (eval/utils.py),
with reliability_guard's settings, and the module and its tests inside swallow_io. What a task can see
of them is reproduced here, quirks included, because verdicts depend on them:

- reliability_guard: TZ=UTC, one OpenMP thread, TensorFlow quiet, faulthandler off, exit() and quit()
  None, matplotlib's figures closed (its pyplot imported, as in every child of BigCodeBench's);
- safe_environment: os.kill and os.killpg reach only the process itself and the programs it started
  with subprocess.Popen (a Pool's workers are not among them: a Pool that is terminated waits for them
  for ever, as there); os.system, subprocess.call and subprocess.run do nothing for a command holding
  "kill"; subprocess.check_output returns b"" for one holding "ps"; os.popen of a "kill" command runs
  `echo Intercepted`; os.execv, execvp and execvpe do nothing; subprocess.Popen starts each program in a
  session of its own, and its communicate() answers (None, None) where it would time out;
- swallow_io: stdout, stderr and stdin one stream that keeps nothing and cannot be read (Sink), and
  subprocess.Popen and subprocess.run functions that capture a program's output unless told otherwise.

What it does not reproduce: its Manager-held list of started programs, which a task's forked children add
to as well (here each process keeps its own), and its one-shot alarm at 240 s inside the test run (here
the time limit ends the sample).
"""

import builtins
import io
import os
import sys


class Sink(io.StringIO):
    """swallow_io's stream, stdout, stderr and stdin at once: what is written goes nowhere, a read fails.
    A StringIO, as its WriteOnlyStringIO is, so that what code does with a stream behaves as there:
    multiprocessing's children close their stdin first (a stream without close() would kill every Pool
    worker as it starts, and the Pool would wait for them for ever), fileno() is refused, and a write to
    it once closed fails."""

    def write(self, text):
        written = super().write(text)  # its checks: a closed stream, text that is not a str
        self.seek(0)
        self.truncate()  # kept by BigCodeBench, never read back: not kept here
        return written

    def read(self, *args):
        raise OSError("stdin is not readable")

    readline = readlines = read

    def readable(self):
        return False


def set_up(namespace: dict) -> None:
    """Everything above, before the task's module runs in `namespace`."""
    import time

    guard_processes()
    os.environ.update(TZ="UTC", OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    time.tzset()
    try:
        import faulthandler

        faulthandler.disable()
    except ImportError:
        pass
    builtins.exit = builtins.quit = None
    try:
        import matplotlib.pyplot as plt

        plt.close("all")
    except BaseException:  # not installed: the tasks that need it fail on their own import
        pass
    namespace.update(sys=sys, os=os, environ=os.environ)
    swallow_output()


def guard_processes() -> None:
    """safe_environment's replacements of os's and subprocess's process functions. Each says what it did
    on stdout (swallowed), as there: in a child whose stdout multiprocessing closed, that print fails."""
    import subprocess
    from _signal import SIGTERM

    me, my_group = os.getpid(), os.getpgid(0)
    started = []  # the pids of the programs Popen started
    kill, killpg, system, popen = os.kill, os.killpg, os.system, os.popen
    call, check_output, run = subprocess.call, subprocess.check_output, subprocess.run

    def safe_kill(pid, sig):
        try:
            os.getpgid(pid)  # a process that is gone: nothing to do
            if pid == me or pid in started:
                kill(pid, sig)
            else:
                print(f"Prevented attempt to kill PID {pid} with signal {sig}")
        except ProcessLookupError:
            pass

    def safe_killpg(pgid, sig):
        if pgid == my_group or pgid in {os.getpgid(pid) for pid in started}:
            killpg(pgid, sig)
        else:
            print(f"Prevented attempt to kill PGID {pgid} with signal {sig}")

    def safe_system(command):
        print(f"Intercepted system command: {command}")
        return 0 if "kill" in command else system(command)

    def safe_call(command, *args, **kwargs):
        print(f"Intercepted subprocess call: {command}")
        return 0 if "kill" in command else call(command, *args, **kwargs)

    def safe_check_output(command, *args, **kwargs):
        print(f"Intercepted command: {command}")
        return b"" if "ps" in command else check_output(command, *args, **kwargs)

    def safe_run(*args, **kwargs):
        print(f"Intercepted subprocess run command: {args}")
        if "kill" in args[0]:
            return subprocess.CompletedProcess(args, 0, b"", b"")
        return run(*args, **kwargs)

    class SafePopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            print(f"Intercepted Popen command: {args}")
            kwargs["preexec_fn"] = os.setsid
            super().__init__(*args, **kwargs)
            started.append(self.pid)

        def communicate(self, *args, **kwargs):
            try:
                return super().communicate(*args, **kwargs)
            except subprocess.TimeoutExpired:
                print("Timeout expired, intercepted and returning None")
                return None, None

        def kill(self):
            print(f"Intercepted kill call for PID {self.pid}")
            safe_kill(self.pid, SIGTERM)

        def terminate(self):
            print(f"Intercepted terminate call for PID {self.pid}")
            safe_kill(self.pid, SIGTERM)

    def safe_popen(command):
        print(f"Intercepted os.popen command: {command}")
        return popen("echo Intercepted" if "kill" in command else command)

    def safe_exec(*args, **kwargs):
        print(f"Intercepted exec command: {args}")

    os.kill, os.killpg, os.system, os.popen = safe_kill, safe_killpg, safe_system, safe_popen
    os.execv = os.execvp = os.execvpe = safe_exec
    subprocess.call, subprocess.check_output, subprocess.run = safe_call, safe_check_output, safe_run
    subprocess.Popen = SafePopen


def swallow_output() -> None:
    """swallow_io: the one stream, and Popen and run (safe_environment's, by now) made to capture a
    program's output where the call says nothing of it."""
    import subprocess

    guarded_popen, guarded_run = subprocess.Popen, subprocess.run

    def captured(kwargs):
        if kwargs.get("capture_output"):
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return kwargs

    subprocess.Popen = lambda *args, **kwargs: guarded_popen(*args, **captured(kwargs))
    subprocess.run = lambda *args, **kwargs: guarded_run(*args, **captured(kwargs))
    sys.stdout = sys.stderr = sys.stdin = Sink()
