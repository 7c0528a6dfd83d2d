"""The zygote's side of isolation "fork": one warm interpreter that forks a process per candidate.
Loaded by path in the zygote's interpreter (worker/candidate/__init__.py); worker/process/zygote.py
is the host's side."""

import _frozen_importlib
import os
import sys

from child import main
from forked_runs import pid_in_proc, prelude_namespace
from guard import guards
from lifeline import died_of, keep
from namespaces import CLONE_NEWPID, new_namespaces, setns, unshare
from sandbox import prepare, restrict_calls, ruleset

_read, _exit, _open, _close = os.read, os._exit, os.open, os.close
_gcd_import = _frozen_importlib._gcd_import  # bound before the guards replace it


# ---- the zygote: one warm interpreter, one fork per candidate ------------------------------------------
#
# Isolation "fork": the host starts this script once, with serve(sock_fd, nest, denied, sandbox, seccomp,
# preload, prelude, posture, toolchains) as its call.
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
# namespace of its own: a fork and ~1 ms of CPU (measured: docs/benchmarks.md). Where the kernel
# refuses, the zygote serves from where it was started, and its candidates report the refusal. With the
# sandbox, the zygote's namespaces include a network namespace, which its candidates share (one at a
# time), and the server attaches the system call filter before its first fork: every candidate has it
# from its first instruction, and only Landlock is left to each (worker/candidate/sandbox.py).
#
#   b"run <workdir>\0<name>=<value>\0..." with four descriptors (SCM_RIGHTS): stdout, stderr, record,
#       lifeline (its stdin is the zygote's own, /dev/null). Fork a process for the
#       candidate in <workdir>, with those variables added to the environment; answer b"pid <pid>", its
#       pid as the host sees it. The host has written the other
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


def serve(
    sock_fd: int,
    nest: bool,
    denied: list[str],
    sandbox: str,
    seccomp: bytes | None,
    preload: list[str],
    prelude: str,
    posture: str = "strict",
    toolchains: tuple = (),
) -> None:
    import _socket  # the zygote's: loaded once, into no candidate's time
    import marshal
    import select  # start_under_init()'s, for every candidate's init: loaded here once

    for module in ("_blake2", "array"):  # run_io()'s (HumanEval+): loaded here once, not by every candidate
        _gcd_import(module)
    for module in preload:  # what the candidates of this kind import (a problem set's prelude): loaded once
        try:
            _gcd_import(module)
        except BaseException:  # not installed, or broken: each candidate that imports it finds out itself
            pass
    if prelude:  # stdin tests' (forked_runs.py): their runners start from its namespace
        try:
            prelude_namespace(prelude)
        except BaseException:  # each runner runs it again, and reports how it fails
            pass
    sock = _socket.socket(fileno=sock_fd)
    home, watch, made = zygote_namespaces(sock, nest, sandbox != "off", posture == "relaxed")
    plan = prepare(sandbox, seccomp, posture, toolchains)
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


def zygote_namespaces(sock, pid: bool, net: bool, loopback: bool) -> tuple[int | None, int | None, dict[str, str]]:
    """Make the zygote's namespaces (new_namespaces()); with a PID namespace, fork the server into it
    as its PID 1 (the process the host started never returns from here). In the server: a
    descriptor of its PID namespace (None without one), the read end of the pipe held by the process
    the host started, and the states of "pid_namespace" and "network"."""
    try:
        _close(os.pidfd_open(os.getpid()))  # host_pid() needs pidfds
        no_pidfd = None
    except (OSError, AttributeError) as exc:
        no_pidfd = f"refused: no pidfd_open ({exc})"
    states = new_namespaces(pid and no_pidfd is None, net, loopback)
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
        return pid_in_proc(fd)
    finally:
        _close(fd)


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
