"""The distributed path with real parts: a real Valkey server, real Celery worker processes, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.protocol import keys
from codeexec.worker.queue.leases import in_flight
from helpers import (
    HANG_S,
    ROOT,
    Worker,
    assert_exact,
    codeexec,
    make_suite,
    report,
    submit,
    wait_done,
    wait_until,
    write_jsonl,
)


@pytest.fixture(params=[pytest.param("fresh", marks=pytest.mark.once), "fork"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Both isolation modes, in .ci/run's first pass; its passes under other Pythons run these end-to-end runs
    in fork mode (the default) only: what the mode changes is the candidate's process, whose host side
    test_runner.py runs in both modes under every Python."""
    return request.param


@pytest.fixture
def env(env: dict[str, str], isolation: str) -> dict[str, str]:
    """The runs submitted take the mode from the environment: every test here in both modes but PRODUCER_ALONE."""
    return {**env, "CODEEXEC_ISOLATION": isolation}


#: For what the producer alone decides (its refusals, its resumption): no candidate's process is in question,
#: so the default mode only (a test's own `isolation` replaces the fixture's two, for `env` too).
PRODUCER_ALONE = pytest.mark.parametrize("isolation", ["fork"])


# ---- the whole sweep ----------------------------------------------------------------------------------


def test_eval_end_to_end_with_json_and_per_sample(env: dict[str, str], tmp_path: Path) -> None:
    suite = make_suite(tmp_path, tasks=6, per_task=4)
    out_file = tmp_path / "results.jsonl"
    out = codeexec(
        env,
        "eval",
        "--problems",
        str(suite.problems),
        "--samples",
        str(suite.samples),
        "--run",
        "e2e",
        "--k",
        "1,2,10",
        "--workers",
        "2",
        "--json",
        "--per-sample",
        str(out_file),
    )
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["run"] == "e2e"
    assert document["n_samples"] == suite.total
    assert {task: (t["n"], t["c"]) for task, t in document["tasks"].items()} == {
        task: (suite.n[task], suite.c[task]) for task in suite.n
    }
    expected_pass1 = sum(suite.c[t] / suite.n[t] for t in suite.n) / len(suite.n)
    assert document["pass_at_k"]["1"] == pytest.approx(expected_pass1)
    assert set(document["pass_at_k"]) == {"1", "2"}  # 10 > n = 4 for every task
    assert "10" in document["left_out"]
    assert document["outcomes"]["pass"] == sum(suite.c.values())
    assert document["outcomes"]["assertion_fail"] == suite.total - sum(suite.c.values())

    samples = [json.loads(line) for line in suite.samples.read_text().splitlines()]
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [(r["task_id"], r["completion"]) for r in lines] == [(s["task_id"], s["completion"]) for s in samples]
    for row in lines:
        assert row["passed"] == (row["exit_code"] == "pass")
        assert row["result"] == "passed" if row["passed"] else row["result"].startswith("failed: ")
        assert row["score"] == (1.0 if row["passed"] else 0.5)


def test_two_workers_share_a_run(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    ppids = tmp_path / "ppids"
    suite = make_suite(tmp_path, tasks=8, per_task=4, slow_s=0.05, ppid_log=ppids)
    unsandboxed = {"CODEEXEC_SANDBOX": "off"}  # the candidates note their worker outside their directory
    first, second = start_worker("w1", extra_env=unsandboxed), start_worker("w2", extra_env=unsandboxed)
    submit(env, suite, "shared")
    assert_exact(env, "shared", suite)
    ran_on = {int(pid) for pid in ppids.read_text().split()}
    assert ran_on & set(first.pool_pids()) and ran_on & set(second.pool_pids())


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_sigkill_of_a_pool_process_mid_sweep(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=8, per_task=5, slow_s=0.15)
    worker = start_worker("w1", concurrency=2)
    submit(env, suite, "killpool")
    wait_done(client, "killpool", 5)
    victim = worker.pool_pids()[0]
    os.kill(victim, signal.SIGKILL)  # Celery replaces the process; its job goes back to the queue
    assert_exact(env, "killpool", suite)


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_sigkill_of_a_whole_worker_mid_sweep(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=8, per_task=5, slow_s=0.15)
    doomed = start_worker("doomed")
    submit(env, suite, "killwhole")
    wait_done(client, "killwhole", 4)
    doomed.kill_whole()  # its lease expires: the survivor sends its job again (worker/queue/leases.py)
    start_worker("survivor")
    assert_exact(env, "killwhole", suite)


def test_redis_restart_mid_sweep(
    env: dict[str, str],
    tmp_path: Path,
    start_worker: Callable[..., Worker],
    server: EmbeddedServer,
    client: redis.Redis,
) -> None:
    suite = make_suite(tmp_path, tasks=8, per_task=5, slow_s=0.1)
    start_worker("w1", concurrency=2)
    submit(env, suite, "restart")
    wait_done(client, "restart", 6)
    server.stop()
    time.sleep(1.0)
    server.start()  # the same data directory: the append-only file brings everything back
    assert_exact(env, "restart", suite)


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_redis_restart_while_one_pool_process_runs_a_job_and_the_other_waits_for_one(
    env: dict[str, str],
    tmp_path: Path,
    start_worker: Callable[..., Worker],
    server: EmbeddedServer,
    client: redis.Redis,
) -> None:
    # Redis goes away while the worker's consumer holds a tick it has not acknowledged (its job runs) and
    # waits for the next one (a BRPOP in flight: the other pool process is free). Celery's clean-up of the
    # lost connection ended the worker then (worker/queue/consumer.py): in 13 of 14 runs before the fix
    # (which of its connections the consumer finds closed first may vary; tests/test_consumer.py makes that
    # state every time). It must connect again, finish the job and take the next run's.
    release = tmp_path / "release"  # the candidate runs until the test lets it end
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "t", "assertions": ["assert True"], "timeout_s": 30}])
    held = f"import os, time\nwhile not os.path.exists({str(release)!r}):\n    time.sleep(0.01)\n"
    samples = write_jsonl(tmp_path / "held.jsonl", [{"task_id": "t", "completion": held}])
    # Without the sandbox, the candidate sees the file outside its directory.
    worker = start_worker("w1", concurrency=2, extra_env={"CODEEXEC_SANDBOX": "off"})
    out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", "held")
    assert out.returncode == 0, out.stderr
    waiting = lambda: any(found.get("cmd") == "brpop" for found in client.client_list())  # noqa: E731
    wait_until(lambda: in_flight(client, "held") and waiting(), "the job never ran beside a consumer waiting")
    server.stop()
    server.start()
    release.touch()
    wait_until(lambda: waiting() or worker.process.poll() is not None, "the worker's consumer did not come back")
    assert worker.process.poll() is None, f"the worker ended:\n{worker.log.read_text()}"
    wait_until(lambda: int(client.hget(keys.stats("held"), keys.DONE) or 0) == 1, "the held job never finished")
    assert report(env, "held")["outcomes"]["pass"] == 1
    quick = write_jsonl(tmp_path / "quick.jsonl", [{"task_id": "t", "completion": "x = 1"}] * 3)
    out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(quick), "--run", "after")
    assert out.returncode == 0, out.stderr
    assert codeexec(env, "status", "after", "--wait", timeout=HANG_S).returncode == 0
    assert worker.process.poll() is None, worker.log.read_text()


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_a_duplicated_delivery_is_counted_once(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=4, per_task=3)
    submit(env, suite, "dup")
    # Every job sent a second time, as a broker redelivery would.
    script = (
        "from codeexec.producer.run import Run\n"
        "from codeexec.worker.queue.store import connect\n"
        "import os\nrun = Run.fetch(connect(os.environ['CODEEXEC_REDIS_URL']), 'dup')\nrefs = run.pending()\n"
        "assert len(refs) == 12, refs\nrun.enqueue(refs, 16)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert client.llen(keys.QUEUE) >= 2 * 12  # one sample per job for a run this small
    start_worker("w1", concurrency=2)
    document = assert_exact(env, "dup", suite)
    assert int(client.hget(keys.stats("dup"), keys.DONE)) == suite.total
    assert document["outcomes"]["pass"] == sum(suite.c.values())


def test_a_sample_that_kills_its_worker_every_time_is_recorded_after_n_attempts(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    problems = write_jsonl(
        tmp_path / "p.jsonl",
        [{"task_id": "k", "assertions": ["assert True"]}, {"task_id": "ok", "assertions": ["assert True"]}],
    )
    # Kills the process that started it: the pool process running it, or (isolation fork) its zygote.
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    samples = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": "k", "completion": killer}, {"task_id": "ok", "completion": "x = 1"}]
    )
    # Only without a PID namespace can a candidate see its worker, and only without the sandbox (its
    # signal scope: tests/test_sandbox.py) kill it.
    start_worker("w1", extra_env={"CODEEXEC_PID_NAMESPACE": "off", "CODEEXEC_SANDBOX": "off"})
    out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", "killer")
    assert out.returncode == 0, out.stderr
    assert codeexec(env, "status", "killer", "--wait").returncode == 0
    per_sample = tmp_path / "out.jsonl"
    document = report(env, "killer", "--per-sample", str(per_sample))
    assert document["tasks"]["k"]["n"] == 1 and document["tasks"]["k"]["c"] == 0
    assert document["tasks"]["ok"]["c"] == 1
    row = json.loads(per_sample.read_text().splitlines()[0])
    assert row["exit_code"] == "error"
    assert "died on each of 3 attempts; not run again" in row["detail"]


def test_infra_error_is_retried_then_kept_out_of_n(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker]
) -> None:
    suite = make_suite(tmp_path, tasks=1, per_task=2)
    start_worker("broken", extra_env={"CODEEXEC_INTERPRETER": "/nonexistent/python", "CODEEXEC_MAX_ATTEMPTS": "2"})
    submit(env, suite, "infra")
    assert codeexec(env, "status", "infra", "--wait").returncode == 0
    document = report(env, "infra")
    assert document["tasks"]["t0"]["n"] == 0
    assert document["outcomes"]["infra_error"] == 2
    assert any("infra_error" in note for note in document["notes"])
    assert document["pass_at_k"] == {}


# ---- the producer dies; bad input ------------------------------------------------------------------------


DIE_DURING = {
    # Kill the producer (SIGKILL, no cleanup) after the first batch of samples is stored...
    "storing": "real = s._chunks\n"
    "def dying(items, size):\n    for i, chunk in enumerate(real(items, size)):\n"
    "        if i == 1 and size == s._PIPELINE_CHUNK:\n            os.kill(os.getpid(), signal.SIGKILL)\n"
    "        yield chunk\ns._chunks = dying\n",
    # ...or after its third job is sent.
    "enqueueing": "from codeexec.worker.queue.celery_app import app\nreal = app.send_task\nsent = []\n"
    "def dying(*a, **k):\n    sent.append(1)\n    if len(sent) > 3:\n        os.kill(os.getpid(), signal.SIGKILL)\n"
    "    return real(*a, **k)\napp.send_task = dying\n",
}


@PRODUCER_ALONE
@pytest.mark.once  # a fault injected into paths the other passes cross
@pytest.mark.parametrize("when", sorted(DIE_DURING))
def test_resume_after_the_producer_was_killed(
    when: str, env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=20, per_task=30)  # 600 samples: six storing chunks of 100, 300 jobs
    submit_argv = ["submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", "r"]
    script = (
        "import os, signal\nimport codeexec.producer.run as s\ns._PIPELINE_CHUNK = 100\n"
        + DIE_DURING[when]
        + f"from codeexec.producer.entry.cli import main\nmain({submit_argv!r})\n"
    )
    died = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True)
    assert died.returncode == -signal.SIGKILL, died.stderr
    status = json.loads(client.get(keys.meta("r")))["status"]
    assert status == ("storing" if when == "storing" else "stored")
    start_worker("w1", concurrency=2)
    out = codeexec(env, "resume", "r", timeout=600)
    assert out.returncode == 0, out.stderr
    assert_exact(env, "r", suite)


@PRODUCER_ALONE
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("malformed", b'{"task_id": "t0", "completion": "x"}\n{"task_id": "t1", \n', "samples.jsonl:2: malformed JSON"),
        ("missing", b'{"task_id": "t0", "completion": "x"}\n{"completion": "x"}\n', "samples.jsonl:2: missing task_id"),
        ("nofield", b'{"task_id": "t0"}\n', "samples.jsonl:1: expected exactly one of completion, solution"),
        (
            "unknown",
            b'{"task_id": "t0", "completion": "x"}\n{"task_id": "nope", "completion": "x"}\n',
            "samples.jsonl:2: 'nope'",
        ),
        (
            "utf8",
            b'{"task_id": "t0", "completion": "x"}\n{"task_id": "t0", "completion": "\xff\xfe"}\n',
            "samples.jsonl:2: not UTF-8",
        ),
        ("empty", b"\n\n", "samples.jsonl: empty file"),
    ],
)
def test_bad_samples_give_a_clear_error_and_leave_redis_unchanged(
    name: str, content: bytes, message: str, env: dict[str, str], tmp_path: Path, client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=1)
    suite.samples.write_bytes(content)
    before = sorted(client.keys("*"))
    out = codeexec(env, "submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", name)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert sorted(client.keys("*")) == before


@PRODUCER_ALONE
def test_bad_timeout_or_hash_seed_is_a_clear_error(env: dict[str, str], tmp_path: Path, client: redis.Redis) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=1)
    inputs = ("--problems", str(suite.problems), "--samples", str(suite.samples))
    for flag, bad in (
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "-1"),
        ("--timeout", "three"),
        ("--hash-seed", "-1"),
        ("--hash-seed", "x"),
        ("--hash-seed", str(2**32)),
    ):
        out = codeexec(env, "submit", *inputs, flag, bad)
        assert out.returncode == 2, (flag, bad)
        assert f"{flag} {bad!r}: expected" in out.stderr and "Traceback" not in out.stderr
    assert client.keys("*") == []


def test_the_hash_seed_is_the_runs_and_can_be_set(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    # Which order a set of strings comes out in depends on the hash seed; every candidate of a run sees the same.
    fruits = "str(list({'apple', 'banana', 'cherry', 'damson', 'elder'}))"

    def order(seed: int) -> str:
        child = {**os.environ, "PYTHONHASHSEED": str(seed)}
        return subprocess.run(
            [sys.executable, "-c", f"print({fruits})"], env=child, capture_output=True, text=True
        ).stdout

    assert order(0) != order(7)  # the check below can fail
    problems = write_jsonl(
        tmp_path / "p.jsonl", [{"task_id": "t", "assertions": [f"assert f() == {order(0).strip()!r}"]}]
    )
    samples = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": "t", "completion": f"def f():\n    return {fruits}\n"}] * 6
    )
    start_worker("w1", concurrency=2)
    for run, extra in (("default", ()), ("again", ()), ("seven", ("--hash-seed", "7"))):
        out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", run, *extra)
        assert out.returncode == 0, out.stderr
        assert codeexec(env, "status", run, "--wait").returncode == 0
    assert report(env, "default")["tasks"]["t"]["c"] == 6
    assert report(env, "again")["tasks"]["t"]["c"] == 6
    assert report(env, "seven")["tasks"]["t"]["c"] == 0
    seeds = {run: json.loads(client.get(keys.meta(run)))["options"]["hash_seed"] for run in ("default", "seven")}
    assert seeds == {"default": 0, "seven": 7}


def test_the_isolation_is_the_runs_recorded_and_shown_and_one_worker_serves_both(
    env: dict[str, str], isolation: str, tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    # A fresh interpreter was started on the runner script; a zygote's fork carries the zygote's -c.
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "t", "assertions": ["assert f() == 'fork'"]}])
    code = "import sys\ndef f():\n    return 'fork' if '-c' in sys.orig_argv else 'fresh'\n"
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t", "completion": code}] * 4)
    start_worker("w1", concurrency=2)
    for run, extra in (("forked", ("--isolation", "fork")), ("fresh", ("--isolation", "fresh")), ("default", ())):
        out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", run, *extra)
        assert out.returncode == 0, out.stderr
    expected = {"forked": "fork", "fresh": "fresh", "default": isolation}
    for run, mode in expected.items():
        assert codeexec(env, "status", run, "--wait").returncode == 0
        document = report(env, run)
        assert (document["isolation"], document["tasks"]["t"]["c"]) == (mode, 4 if mode == "fork" else 0)
        assert json.loads(client.get(keys.meta(run)))["options"]["isolation"] == mode
    shown = codeexec(env, "report", "forked")
    assert shown.returncode == 0 and "isolation" in shown.stdout and "fork" in shown.stdout
    bad = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--isolation", "spawn")
    assert bad.returncode == 2 and "--isolation" in bad.stderr and "Traceback" not in bad.stderr


@PRODUCER_ALONE
def test_bad_k_and_duplicate_run_name_leave_redis_unchanged(
    env: dict[str, str], tmp_path: Path, client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=1)
    for bad in ("0", "-1", "1,x"):
        out = codeexec(env, "submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--k", bad)
        assert out.returncode == 2 and "--k" in out.stderr and "Traceback" not in out.stderr
    assert client.keys("*") == []
    submit(env, suite, "taken")
    before = {key: client.type(key) for key in client.keys("*")}
    snapshot = client.get(keys.meta("taken"))
    out = codeexec(env, "submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", "taken")
    assert out.returncode == 2
    assert "a run named 'taken' exists already" in out.stderr
    assert {key: client.type(key) for key in client.keys("*")} == before
    assert client.get(keys.meta("taken")) == snapshot
    assert client.llen(keys.QUEUE) == 2  # only the first submission's jobs


# ---- the private Valkey --------------------------------------------------------------------------------


def test_embedded_default_keeps_results_for_a_later_report(tmp_path: Path) -> None:
    env = {**os.environ, "CODEEXEC_DATA_DIR": str(tmp_path / "data")}
    env.pop("CODEEXEC_REDIS_URL", None)
    suite = make_suite(tmp_path, tasks=3, per_task=2)
    out = codeexec(
        env, "eval", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", "local", "--json"
    )
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout)
    assert first["n_done"] == suite.total
    server = EmbeddedServer(tmp_path / "data")
    assert not server.running()  # eval stopped the server it started...
    again = report(env, "local")  # ...and report starts it again on the same data
    assert again["tasks"] == first["tasks"]
    listed = codeexec(env, "runs", "--json")
    assert [row["run"] for row in json.loads(listed.stdout)] == ["local"]
    table = codeexec(env, "report", "local", "--per-task")
    assert table.returncode == 0, table.stderr
    rows = {line.split("│")[1].strip(): line for line in table.stdout.splitlines() if line.startswith("│ t")}
    for task_id in suite.n:  # task, n, c and pass@1 on each task's row
        cells = [cell.strip() for cell in rows[task_id].split("│")[1:-1]]
        assert cells[:3] == [task_id, str(suite.n[task_id]), str(suite.c[task_id])]
        assert cells[3] == f"{100 * suite.c[task_id] / suite.n[task_id]:.1f}%"
