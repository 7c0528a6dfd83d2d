"""Test hosts on this machine: Linux network namespaces joined by a bridge, each with an address of
its own on a private subnet (never an address outside this machine). Used by the multi-host test and
bench/multihost.py. Needs root and iproute2's `ip`.

    with Network(["redis", "w1", "w2", "producer"]) as net:
        net.popen("w1", ["codeexec", "worker"], env=...)   # runs inside host w1
        net.address("redis")                                # 10.213.<k>.1
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import system


def unavailable() -> str | None:
    """Why test hosts cannot be built here, or None if they can."""
    if why_not := system.missing(system.MULTIHOST):
        return why_not
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    probe = f"cxprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], check=False)
    return None


def _ip(*args: str, netns: str | None = None) -> None:
    command = ["ip", "netns", "exec", netns, "ip", *args] if netns else ["ip", *args]
    subprocess.run(command, check=True, capture_output=True)


class Network:
    """Hosts named `hosts`, each a namespace with eth0 on one bridge (in a namespace of its own too,
    so nothing of the machine's own network is touched)."""

    def __init__(self, hosts: Sequence[str]) -> None:
        tag = f"cx{os.getpid() % 100000}"
        self.subnet = f"10.213.{os.getpid() % 250}"
        self.switch = f"{tag}sw"
        self.namespaces = {host: f"{tag}{host}" for host in hosts}
        self.addresses = {host: f"{self.subnet}.{i + 1}" for i, host in enumerate(hosts)}
        self.processes: list[subprocess.Popen[Any]] = []

    def __enter__(self) -> Network:
        try:
            subprocess.run(["ip", "netns", "add", self.switch], check=True, capture_output=True)
            _ip("link", "add", "br0", "type", "bridge", netns=self.switch)
            _ip("link", "set", "br0", "up", netns=self.switch)
            for i, (host, netns) in enumerate(self.namespaces.items()):
                subprocess.run(["ip", "netns", "add", netns], check=True, capture_output=True)
                port = f"{self.switch[:8]}p{i}"
                _ip("link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", netns, netns=self.switch)
                _ip("link", "set", port, "master", "br0", netns=self.switch)
                _ip("link", "set", port, "up", netns=self.switch)
                _ip("addr", "add", f"{self.addresses[host]}/24", "dev", "eth0", netns=netns)
                _ip("link", "set", "eth0", "up", netns=netns)
                _ip("link", "set", "lo", "up", netns=netns)
        except BaseException:
            self.close()
            raise
        return self

    def address(self, host: str) -> str:
        return self.addresses[host]

    def popen(self, host: str, command: Sequence[str], log: Path, **kwargs: Any) -> subprocess.Popen[Any]:
        """Start command inside host, in a process group of its own (so the host can be killed whole)."""
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespaces[host], *command],
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,
        )
        self.processes.append(process)
        return process

    def run(self, host: str, command: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ip", "netns", "exec", self.namespaces[host], *command], capture_output=True, text=True, **kwargs
        )

    def kill_host(self, host: str) -> None:
        """The machine dies: every process in it is SIGKILLed and its link goes down."""
        _ip("link", "set", "eth0", "down", netns=self.namespaces[host])
        pids = subprocess.run(["ip", "netns", "pids", self.namespaces[host]], capture_output=True, text=True)
        for pid in pids.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait()
        for netns in [*self.namespaces.values(), self.switch]:
            subprocess.run(["ip", "netns", "del", netns], check=False, capture_output=True)

    def __exit__(self, *exc: object) -> None:
        self.close()
