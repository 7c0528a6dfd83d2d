"""The deployment under a real container engine: the unchanged Dockerfile and docker-compose.yml, built
and brought up, a sweep submitted through the producer profile, a worker container killed mid-sweep,
exact counts; and the sandbox inside the worker container: every protection on, the escape suite
blocked.

The engine is Podman with podman-compose: Docker Compose v2 cannot be installed on these machines
(neither Debian nor PyPI has it), Debian's docker-compose 1.29 rejects the file's top-level `name:`,
and Podman runs the compose file's containers with no daemon to start. Docker Hub cannot be reached:
the base images are stand-ins built offline (tests/standins/build.sh). Needs root, to install and run
the engine; skipped, saying why, where it cannot.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import system
from codeexec.protocol import keys
from helpers import ROOT, make_suite

STANDINS = ROOT / "tests" / "standins" / "build.sh"
pytestmark = pytest.mark.once  # in containers: the image's Python
COMPOSE_VENV = Path("/var/tmp/codeexec-podman-compose")
PROJECT_FILES = [
    *("Dockerfile", "docker-compose.yml", "pyproject.toml", "README.md"),
    *("__init__.py", "py.typed", "protocol", "worker", "producer"),
]
IMAGE, TESTS_IMAGE = "codeexec-worker", "codeexec-worker-tests"
PROTECTIONS = ("network", "filesystem", "syscalls", "signals", "capabilities", "pid_namespace")


def run(command: list[str], timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run `command`; fail the test, with its output, unless it succeeds in time."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{' '.join(command)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def install_engine() -> str | None:
    """Install what the test needs of Debian's (tests/system.py: Podman, its runtime, init and network, and
    debootstrap) and podman-compose (PyPI) where missing; None, or why they cannot be."""
    if system.missing(system.COMPOSE):
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            return f"{system.missing(system.COMPOSE)}; the test installs them itself as root, with apt-get"
        apt = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", *system.packages(system.COMPOSE)],
        ):
            done = subprocess.run(command, capture_output=True, text=True, env=apt, timeout=900)
            if done.returncode != 0:
                return f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}"
    if os.geteuid() != 0:
        return "running the container engine needs root"
    if not (COMPOSE_VENV / "bin" / "podman-compose").exists():
        subprocess.run([sys.executable, "-m", "venv", str(COMPOSE_VENV)], check=True, timeout=120)
        run([str(COMPOSE_VENV / "bin" / "pip"), "install", "-q", "podman-compose"], timeout=600)
    return None


def containers_conf(directory: Path) -> Path:
    """Podman's settings for this machine, as a file of the test's own (CONTAINERS_CONF)."""
    hard_nofile = int(subprocess.run(["sh", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout)
    conf = directory / "containers.conf"
    conf.write_text(
        "[containers]\n"
        # Podman's default rlimits (nofile 1048576) are above this root's hard limit, and root here has
        # no CAP_SYS_RESOURCE to raise it: every container would fail to start.
        f'default_ulimits = ["nofile={hard_nofile}:{hard_nofile}", "nproc=4096:4096"]\n'
        "[engine]\n"
        # crun fails on this kernel's cgroup v1 hierarchy; runc works on both.
        'runtime = "runc"\n'
    )
    return conf


class Stack:
    """The compose project brought up under Podman from a copy of the repository's files."""

    def __init__(self, directory: Path, environment: dict[str, str]) -> None:
        self.directory = directory
        self.name = "cxtest" + secrets.token_hex(3)
        self.password = secrets.token_hex(16)
        self.env = {**environment, "REDIS_PASSWORD": self.password}
        self.label = f"io.podman.compose.project={self.name}"

    def compose(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        podman_compose = str(COMPOSE_VENV / "bin" / "podman-compose")
        return run([podman_compose, "-p", self.name, *args], timeout, cwd=self.directory, env=self.env)

    def podman(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return run(["podman", *args], timeout, cwd=self.directory, env=self.env)

    def container(self, service: str, index: int = 1) -> str:
        return f"{self.name}_{service}_{index}"

    def redis(self, *args: str) -> str:
        """A valkey-cli command in the Redis container (which has the password in REDISCLI_AUTH)."""
        return self.podman("exec", self.container("redis"), "valkey-cli", "--raw", *args, timeout=60).stdout.strip()

    def done(self, run_id: str) -> int:
        return int(self.redis("HGET", keys.stats(run_id), keys.DONE) or 0)

    def healthy(self, service: str) -> bool:
        """Whether the service's own healthcheck passes now."""
        check = ["podman", "healthcheck", "run", self.container(service)]
        return subprocess.run(check, capture_output=True, env=self.env, timeout=60).returncode == 0

    def hostname(self, container: str) -> str:
        return self.podman("inspect", "--format", "{{.Config.Hostname}}", container).stdout.strip()

    def worker_hosts(self) -> set[str]:
        """The hosts of the worker processes that have beaten."""
        return {worker_id.split(":")[0] for worker_id in self.redis("ZRANGE", keys.WORKERS, "0", "-1").split()}

    def lease_holders(self) -> list[str]:
        """The worker ids (host:pid:token) holding a job now: one snapshot, taken by a script (a job
        of one sample lasts less than a few podman exec round trips)."""
        script = (
            "local out = {} for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do "
            "local lease = redis.call('GET', KEYS[2] .. id) if lease then table.insert(out, lease) end end "
            "return out"
        )
        leases = self.redis("EVAL", script, "2", keys.LEASES, keys.lease("")).splitlines()
        return [json.loads(lease)["worker"] for lease in leases if lease]

    def logs(self) -> str:
        """The last lines each of the project's containers wrote."""
        names = self.podman("ps", "-a", "--format", "{{.Names}}", "--filter", f"label={self.label}").stdout.split()
        tails = [
            subprocess.run(["podman", "logs", "--tail", "30", name], capture_output=True, text=True) for name in names
        ]
        return "\n".join(f"--- {name}\n{tail.stdout}{tail.stderr}" for name, tail in zip(names, tails, strict=True))

    def tear_down(self) -> None:
        """Remove every container, volume, network and image the test made (the stand-ins stay)."""
        label = f"label={self.label}"
        commands = [
            [str(COMPOSE_VENV / "bin" / "podman-compose"), "-p", self.name, "down", "-v"],
            ["sh", "-c", f"podman ps -aq --filter {label} | xargs -r podman rm -f"],
            ["sh", "-c", f"podman volume ls -q --filter {label} | xargs -r podman volume rm -f"],
            ["podman", "network", "rm", "-f", f"{self.name}_default"],
            ["podman", "rmi", "-f", TESTS_IMAGE, IMAGE],
        ]
        for command in commands:
            subprocess.run(command, capture_output=True, cwd=self.directory, env=self.env, timeout=300)


def worker_flags(project: Path) -> list[str]:
    """`podman run` flags for the compose file's worker service: its user, read-only root, tmpfs,
    security options (its seccomp profile), capabilities and init."""
    worker = yaml.safe_load((project / "docker-compose.yml").read_text())["services"]["worker"]
    flags = ["--user", worker["user"], "--init"] if worker["init"] else ["--user", worker["user"]]
    if worker["read_only"]:
        flags.append("--read-only")
    flags += [f"--tmpfs={mount}" for mount in worker["tmpfs"]]
    for option in worker["security_opt"]:
        name, _, value = option.partition("=")
        if name == "seccomp" and value != "unconfined":
            option = f"seccomp={project / value}"
        flags.append(f"--security-opt={option}")
    flags += [f"--cap-drop={capability}" for capability in worker["cap_drop"]]
    return flags


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    why_not = install_engine()
    if why_not:
        pytest.skip(why_not)
    directory = tmp_path_factory.mktemp("compose")
    environment = {**os.environ, "CONTAINERS_CONF": str(containers_conf(directory))}
    run(["bash", str(STANDINS), "podman"], timeout=900, env=environment)
    project = directory / "project"
    project.mkdir()
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, project / name)
    stack = Stack(project, environment)
    try:
        # The stand-ins are local images: never look for them in a registry.
        stack.podman("build", "--pull=never", "--network=host", "-t", IMAGE, ".", timeout=900)
        stack.compose("up", "-d", "--scale", "worker=2")  # once: a second `up` of a running project fails
        yield stack
    finally:
        stack.tear_down()


def test_a_sweep_survives_a_worker_container_killed_mid_way(stack: Stack) -> None:
    data = stack.directory / "data"  # the producer service's ./data:/data
    data.mkdir()
    # 40 one-sample jobs of 2 s each: a job the second container holds is still in hand when it is killed.
    suite = make_suite(data, tasks=8, per_task=5, slow_s=2)
    hosts = [stack.hostname(stack.container("worker", index)) for index in (1, 2)]
    deadline = time.monotonic() + 300
    while not stack.healthy("redis"):  # podman-compose starts the workers without waiting for it
        assert time.monotonic() < deadline, f"Valkey did not start\n{stack.logs()}"
        time.sleep(0.5)
    while not set(hosts) <= stack.worker_hosts():  # both containers' workers beat: neither misses the sweep
        assert time.monotonic() < deadline, f"the worker containers did not start\n{stack.logs()}"
        time.sleep(0.5)
    stack.compose(
        "--profile", "tools", "run", "--rm", "producer",
        "codeexec", "submit", "--problems", "/data/problems.jsonl", "--samples", "/data/samples.jsonl",
        "--run", "deploy",
    )  # fmt: skip
    victim = stack.container("worker", 2)
    while not any(holder.startswith(f"{hosts[1]}:") for holder in stack.lease_holders()):
        assert stack.done("deploy") < suite.total, f"the second worker container took no job\n{stack.logs()}"
        assert time.monotonic() < deadline, f"the sweep did not start\n{stack.logs()}"
        time.sleep(0.2)
    stack.podman("kill", victim)  # SIGKILL: the container dies with its job in hand
    assert stack.done("deploy") < suite.total  # mid-sweep

    while stack.done("deploy") < suite.total:
        assert time.monotonic() < deadline, f"{stack.done('deploy')} of {suite.total} results\n{stack.logs()}"
        time.sleep(0.5)
    report = json.loads(
        stack.compose("--profile", "tools", "run", "--rm", "producer", "codeexec", "report", "deploy", "--json").stdout
    )
    assert {task: (t["n"], t["c"]) for task, t in report["tasks"].items()} == {
        task: (suite.n[task], suite.c[task]) for task in suite.n
    }
    assert report["n_done"] == report["n_samples"] == suite.total and report["complete"] is True


def test_every_sandbox_protection_is_on_in_the_worker_container(stack: Stack) -> None:
    doctor = stack.podman("exec", stack.container("worker"), "codeexec", "doctor", "--json", timeout=120)
    for mode, protections in json.loads(doctor.stdout)["isolation"].items():
        assert {name: protections.get(name) for name in PROTECTIONS} == dict.fromkeys(PROTECTIONS, "on"), mode


def test_the_escape_suite_is_blocked_in_the_worker_container(stack: Stack) -> None:
    # The worker image with the test dependencies and the tests, run with the worker service's flags.
    # No network: the suite's own servers are on the container's loopback.
    shutil.copytree(ROOT / "tests", stack.directory / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (stack.directory / "Tests.Containerfile").write_text(
        f"FROM {IMAGE}\nUSER root\nRUN pip install -q pytest pytest-xdist hypothesis fakeredis pyyaml\n"
        "COPY tests ./tests\nUSER 10001:10001\n"
    )
    stack.podman(
        "build", "--pull=never", "--network=host", "-f", "Tests.Containerfile", "-t", TESTS_IMAGE, ".", timeout=900
    )
    suite = subprocess.run(
        ["podman", "run", "--rm", "--network=none", *worker_flags(stack.directory), TESTS_IMAGE,
         "python", "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0", "tests/test_sandbox.py"],
        capture_output=True, text=True, timeout=1200, env=stack.env,
    )  # fmt: skip
    assert suite.returncode == 0, suite.stdout + suite.stderr
    skipped = [line for line in suite.stdout.splitlines() if line.startswith("SKIPPED")]
    # The only skips allowed: the Pythons the image does not have, and a control that makes a call the
    # container refuses to every process.
    allowed = ("is not on PATH nor in pyenv's versions", "refused to every process here")
    assert all(any(reason in line for reason in allowed) for line in skipped), skipped
    assert " passed" in suite.stdout.splitlines()[-1], suite.stdout
    print(suite.stdout.splitlines()[-1], *skipped, sep="\n")  # what ran, in the log of CI
