"""The namespaces a candidate's processes are made in (sandbox.py's docstring says what each stops): a PID
namespace and a network namespace, inside a user namespace that lets an unprivileged process make them. Made
by a fresh candidate's interpreter (child.py), once by a zygote for all its forks (warm.py), and by a
compiler kept running before it executes the compiler (worker/compilers/persistent.py, which loads this module as
the child does, from this directory). Built-in modules only, as the child's other modules.
"""

import os

from sandbox import libc, loopback_up

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


def new_namespaces(pid: bool, net: bool, loopback: bool = False) -> dict[str, str]:
    """Make the PID namespace the next fork() enters (`pid`) and a network namespace this process is in
    at once (`net`, the sandbox's; its loopback up with `loopback`, the relaxed posture's), inside a new
    user namespace: what lets an unprivileged process make them. The state of "pid_namespace" and
    "network": "on", "off" or "refused: <why>"."""
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
            if loopback and flags & net_flag:
                try:
                    loopback_up()
                except OSError:  # the namespace still holds nothing to reach: tasks that need it fail
                    pass
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
            os.write(fd, text.encode())
        finally:
            os.close(fd)
