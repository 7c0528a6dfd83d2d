"""The scale-out deployment: docker-compose.yml, the Dockerfile and the worker's seccomp profile, read
as files, and the worker container's command line run for real outside a container. They are run under
a real engine in tests/test_compose.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import yaml

from codeexec.producer.entry.cli import build_parser
from codeexec.protocol import keys
from codeexec.protocol.settings import MAX_TIMEOUT_S, Settings
from helpers import ROOT, codeexec, make_suite

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def seconds(duration: str) -> float:
    """A compose duration ("17m", "1m30s", "90s") in seconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|m|s)", duration)
    assert parts and "".join(f"{n}{u}" for n, u in parts) == duration, duration
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def test_the_services() -> None:
    assert set(SERVICES) == {"redis", "worker", "flower", "producer"}
    assert SERVICES["flower"]["profiles"] == ["monitoring"]
    assert SERVICES["producer"]["profiles"] == ["tools"]
    assert "profiles" not in SERVICES["redis"] and "profiles" not in SERVICES["worker"]


def test_redis_persists_never_evicts_needs_a_password_and_reports_health() -> None:
    redis_service = SERVICES["redis"]
    assert redis_service["image"].startswith(("valkey/valkey:", "redis:"))
    command = redis_service["command"]
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--appendonly"] == "yes"
    assert options["--appendfsync"] == "everysec"
    assert options["--maxmemory-policy"] == "noeviction"
    assert options["--requirepass"].startswith("${REDIS_PASSWORD:?")  # from the environment, required
    assert "ping" in redis_service["healthcheck"]["test"]
    volume = redis_service["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in COMPOSE["volumes"]  # a named volume
    # Published to localhost unless REDIS_BIND names the private network: never 0.0.0.0 by default.
    assert all(port.startswith("${REDIS_BIND:-127.0.0.1}:") for port in redis_service["ports"])


def test_every_codeexec_service_points_at_the_shared_redis_with_the_password() -> None:
    for name in ("worker", "flower", "producer"):
        url = SERVICES[name]["environment"]["CODEEXEC_REDIS_URL"]
        assert url.startswith("redis://:${REDIS_PASSWORD:?") and url.endswith("@${REDIS_HOST:-redis}:6379/0")
        assert SERVICES[name]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_every_command_is_a_real_codeexec_command() -> None:
    for name in ("worker", "flower", "producer"):
        command = SERVICES[name]["command"]
        assert command[0] == "codeexec", name
        build_parser().parse_args(command[1:])  # SystemExit (a usage error) fails the test
    assert SERVICES["worker"]["command"] == ["codeexec", "worker"]
    assert re.search(r'^CMD \["codeexec", "worker"\]$', DOCKERFILE, re.M)


def test_the_worker_is_locked_down_and_shuts_down_warm() -> None:
    worker = SERVICES["worker"]
    assert worker["build"]["context"] == "."  # with the LANGUAGES build argument (docs/deployment.md)
    assert worker["build"]["args"] == {"LANGUAGES": "${LANGUAGES:-}"}
    assert worker["read_only"] is True
    assert any(mount.startswith("/tmp") for mount in worker["tmpfs"])  # the only writable place
    assert "no-new-privileges:true" in worker["security_opt"]
    assert worker["cap_drop"] == ["ALL"]
    # The sandbox's namespaces need unshare(), which Docker's default seccomp profile refuses: the
    # repository's profile allows it (next test), and nothing is granted.
    assert "seccomp=./worker/seccomp.json" in worker["security_opt"]
    assert "privileged" not in worker and "cap_add" not in worker
    assert worker["init"] is True
    uid = int(worker["user"].split(":")[0])
    assert uid != 0 and re.search(rf"^USER {uid}:", DOCKERFILE, re.M)
    assert "container_name" not in worker  # `docker compose up --scale worker=N` needs that
    # Longer than the longest job: a full batch whose candidates each start slowly and time out.
    settings = Settings()
    longest_job = settings.batch_size * (MAX_TIMEOUT_S + settings.startup_timeout_s)
    assert seconds(worker["stop_grace_period"]) > longest_job


def test_the_worker_seccomp_profile_allows_the_sandbox_and_refuses_the_kernel_s_reach() -> None:
    profile = json.loads((ROOT / "worker" / "seccomp.json").read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    refused = set()
    for rule in profile["syscalls"]:
        assert rule["comment"] and rule["action"] == "SCMP_ACT_ERRNO" and rule["errnoRet"] == 1  # EPERM
        assert "args" not in rule and "includes" not in rule and "excludes" not in rule  # for every process
        refused.update(rule["names"])
    # What the sandbox makes: user, network and PID namespaces, a Landlock ruleset, its own filter.
    needed = {"unshare", "clone", "clone3", "setns", "seccomp", "prctl", "landlock_create_ruleset"}
    needed |= {"landlock_add_rule", "landlock_restrict_self"}
    assert not refused & needed
    reaching_past_the_container = {"mount", "fsopen", "open_by_handle_at", "pivot_root", "init_module"}
    reaching_past_the_container |= {"kexec_load", "reboot", "ptrace", "process_vm_writev", "pidfd_getfd", "keyctl"}
    reaching_past_the_container |= {"bpf", "perf_event_open", "io_uring_setup", "userfaultfd", "clock_settime"}
    assert reaching_past_the_container <= refused
    assert {arch["architecture"] for arch in profile["archMap"]} == {"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}


def test_the_image_installs_the_package_and_runs_unprivileged() -> None:
    assert re.search(r"^FROM python:3\.1\d", DOCKERFILE, re.M)
    assert re.search(r"^RUN pip install '\.\[monitor\]'", DOCKERFILE, re.M)
    users = re.findall(r"^USER (\S+)", DOCKERFILE, re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root")


def test_the_worker_container_command_line_processes_a_job(
    env: dict[str, str], client: redis.Redis, tmp_path: Path
) -> None:
    # Exactly the container's command and environment, with the shared Redis replaced by the test's.
    worker = SERVICES["worker"]
    command = [str(Path(sys.executable).with_name(worker["command"][0])), *worker["command"][1:]]
    worker_env = {**env, **worker["environment"], "CODEEXEC_REDIS_URL": env["CODEEXEC_REDIS_URL"]}
    log = tmp_path / "worker.log"
    process = subprocess.Popen(
        command, env=worker_env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        suite = make_suite(tmp_path, tasks=3, per_task=2)
        submitted = codeexec(
            env, "submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", "container"
        )
        assert submitted.returncode == 0, submitted.stderr
        deadline = time.monotonic() + 60
        while int(client.hget(keys.stats("container"), keys.DONE) or 0) < suite.total:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert {task: int(n) for task, n in client.hgetall(keys.n("container")).items()} == suite.n
    finally:
        os.killpg(process.pid, 15)  # a warm shutdown, as `docker stop` asks for
        try:
            assert process.wait(timeout=30) == 0, log.read_text()
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            pytest.fail("the worker did not stop on SIGTERM")
