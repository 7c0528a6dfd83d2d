"""Isolation "fork" (worker/process/zygote.py): what only the zygote has, that the runner's own tests, run in
both modes, cannot show. Its death under a candidate is the machine's failure, never a verdict, and
costs nothing but a retry; its memory stays flat; it goes when its host goes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from codeexec.worker.process.proctree import become_subreaper, children
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.process.zygote import close_idle, idle_pids
from helpers import HANG_S, ROOT, Worker, codeexec, report, stress, wait_for_orphans, write_jsonl

# Run by a candidate: `zygote` is the pid of the zygote its process was forked from, the process its
# host started, and `server` that zygote's process that forks candidates: its child, PID 1 of the
# zygote's own namespaces (the candidate's process, its init, the server and the zygote all carry the
# zygote's arguments; the host does not).
FIND_ZYGOTE = """import os
def parent(pid):
    return int(open(f'/proc/{pid}/stat').read().rpartition(') ')[2].split()[1])
def forked(pid):
    return b'import serve' in open(f'/proc/{pid}/cmdline', 'rb').read()
def alive(pid):
    try:
        return open(f'/proc/{pid}/stat').read().rpartition(') ')[2][0] != 'Z'
    except OSError:
        return False
server, zygote = None, int(os.readlink('/proc/self'))
while forked(parent(zygote)):
    server, zygote = zygote, parent(zygote)
"""


@pytest.fixture(autouse=True)
def no_idle_zygotes() -> None:
    """Start from none: other tests of this process leave zygotes of other kinds (interpreters, seeds)."""
    close_idle()


def idle_zygotes() -> set[int]:
    """This process's idle zygotes, one pid each: its child (idle_pids() also has the process that forks
    candidates, where that is the child's own child in namespaces of its own)."""
    return set(children("self")) & idle_pids()


def rss_anon_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise AssertionError(f"no RssAnon for {pid}")


@pytest.mark.parametrize("victim", ["zygote", "server"])
def test_a_zygote_killed_under_a_candidate_is_an_infra_error_and_the_next_candidate_gets_a_new_one(
    tmp_path: Path, victim: str
) -> None:
    become_subreaper()
    reported = tmp_path / "zygote"
    # The candidate says which process of the zygote it came from, then waits until it is dead: no timing.
    code = FIND_ZYGOTE + (
        f"assert server is not None\nopen({str(reported)!r}, 'w').write(str({victim}))\n"
        f"import time\nwhile alive({victim}):\n    time.sleep(0.01)\ndef f():\n    return 1\n"
    )

    def kill_when_reported() -> None:
        hang = time.monotonic() + HANG_S
        while not reported.exists() or not reported.read_text():
            if time.monotonic() > hang:
                return
            time.sleep(0.01)
        os.kill(int(reported.read_text()), signal.SIGKILL)

    before = set(children("self"))  # this process's other children (other tests', in a whole run)
    killer = threading.Thread(target=kill_when_reported)
    killer.start()
    # Without the sandbox: the candidate finds its zygote in /proc and reports outside its directory.
    result = run_candidate(code, ["assert f() == 1"], 30, isolation="fork", sandbox="off")
    killer.join()
    assert result.exit_code == "infra_error", result
    assert "the candidate's zygote was lost: the zygote died" in result.detail
    dead = int(reported.read_text())
    assert dead not in children("self") and dead not in idle_pids()
    assert run_candidate("def f():\n    return 1\n", ["assert f() == 1"], isolation="fork").exit_code == "pass"
    assert len(idle_zygotes()) == 1 and dead not in idle_pids()
    left = set(children("self")) - before - idle_pids()  # the lost candidate's processes are reaped
    assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left]


@pytest.mark.parametrize("victim", ["zygote", "server"])
def test_a_zygote_that_died_while_idle_is_replaced_without_a_failure(victim: str) -> None:
    assert run_candidate("x = 1", ["assert x == 1"], isolation="fork").exit_code == "pass"
    (idle,) = idle_zygotes()
    (server,) = idle_pids() - {idle}
    os.kill(idle if victim == "zygote" else server, signal.SIGKILL)
    os.waitid(os.P_PID, idle, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped: the runner finds out
    assert run_candidate("x = 1", ["assert x == 1"], isolation="fork").exit_code == "pass"
    assert idle not in idle_pids() and server not in idle_pids()


# bench/stress.py forks 10,000, where a zygote that grew by a few bytes a candidate would be found.
CANDIDATES = stress(1_000, 10_000)


@pytest.mark.once  # a stress loop
def test_the_zygotes_memory_stays_flat_over_many_candidates() -> None:
    run_candidate("x = 1", ["assert x == 1"], isolation="fork")
    zygote = idle_pids()
    before = sum(map(rss_anon_kib, zygote))
    for number in range(CANDIDATES):
        result = run_candidate("x = [number for number in range(100)]", ["assert len(x) == 100"], isolation="fork")
        assert result.exit_code == "pass", (number, result)
    assert idle_pids() == zygote  # one zygote forked them all
    after = sum(map(rss_anon_kib, zygote))
    assert after - before < 2048, (before, after)


def test_a_zygote_ends_with_its_host(tmp_path: Path) -> None:
    become_subreaper()  # what the host leaves is re-parented to us, where we can see it end
    script = (
        "import sys\nfrom codeexec.worker.process.runner import run_candidate\n"
        "from codeexec.worker.process.zygote import idle_pids\n"
        "assert run_candidate('x = 1', ['assert x == 1'], isolation='fork').exit_code == 'pass'\n"
        "print(*idle_pids(), flush=True)\nsys.stdin.read()\n"
    )
    host = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    zygote = [int(pid) for pid in host.stdout.readline().split()]  # type: ignore[union-attr]
    host.kill()
    host.wait()
    wait_for_orphans()  # the zygote, now ours, must end by itself: its end of the socket reads empty
    assert zygote and not [pid for pid in zygote if Path(f"/proc/{pid}").exists()]


def test_zygotes_killed_mid_sweep_cost_a_retry_and_no_verdict(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    # Two samples say which zygote runs them, the first time, and wait for it to die; the test kills it
    # (the worker's own processes are left alone). Sent again, they pass like the others.
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "t", "assertions": ["assert f() == 1"]}])
    normal = [{"task_id": "t", "completion": f"def f():\n    return {j % 2}\n"} for j in range(30)]
    victims = []
    for j in range(2):
        marker = tmp_path / f"victim{j}"
        wait = (
            f"import os, time\nif not os.path.exists({str(marker)!r}):\n"
            + "".join(f"    {line}\n" for line in FIND_ZYGOTE.splitlines())
            + f"    open({str(marker)!r} + '.tmp', 'w').write(str(zygote))\n"
            + f"    os.rename({str(marker)!r} + '.tmp', {str(marker)!r})\n"
            + "    while alive(zygote):\n        time.sleep(0.01)\n"
        )
        victims.append({"task_id": "t", "completion": wait + "def f():\n    return 1\n"})
    samples = write_jsonl(tmp_path / "s.jsonl", normal[:15] + victims + normal[15:])
    # Without the sandbox: a victim finds its zygote in /proc and reports outside its directory.
    worker = start_worker("w1", concurrency=2, extra_env={"CODEEXEC_SANDBOX": "off"})
    argv = ["submit", "--problems", str(problems), "--samples", str(samples), "--run", "z", "--isolation", "fork"]
    argv += ["--timeout", "30"]  # a victim waits as long as the test takes to kill its zygote
    assert codeexec(env, *argv).returncode == 0
    hang = time.monotonic() + HANG_S
    killed = set()
    while len(killed) < 2:
        assert time.monotonic() < hang, worker.log.read_text()
        for j in range(2):
            marker = tmp_path / f"victim{j}"
            if j not in killed and marker.exists():
                os.kill(int(marker.read_text()), signal.SIGKILL)
                killed.add(j)
        time.sleep(0.01)
    assert codeexec(env, "status", "z", "--wait").returncode == 0
    document = report(env, "z")
    assert (document["tasks"]["t"]["n"], document["tasks"]["t"]["c"]) == (32, 15 + 2)
    assert document["outcomes"]["infra_error"] == 0 and document["isolation"] == "fork"
    assert worker.log.read_text().count("the candidate's zygote was lost") == 2
    per_sample = tmp_path / "out.jsonl"
    assert codeexec(env, "report", "z", "--per-sample", str(per_sample)).returncode == 0
    rows = [json.loads(line) for line in per_sample.read_text().splitlines()]
    assert [row["passed"] for row in rows[15:17]] == [True, True]
