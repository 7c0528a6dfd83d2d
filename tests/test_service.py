"""The HTTP service (`codeexec serve`): a real server process, a real Valkey, real Celery workers, real
HTTP clients. SandboxFusion's /run_code semantics, the token, the body limit, overload, and batches
that stream, re-attach and survive a server's restart. The RL frameworks' own clients: test_rl_clients.py."""

from __future__ import annotations

import base64
import json
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis

from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.protocol import keys
from helpers import Server, Worker, codeexec, make_suite, submit, wait_done, wait_until

SERVE_RUN = "serve"


def run_code(url: str, **request: object) -> dict:
    response = httpx.post(f"{url}/run_code", json={"language": "python", **request}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def nothing_queued(client: redis.Redis) -> None:
    assert client.llen(keys.jobs(SERVE_RUN)) == 0
    assert client.hlen(keys.problems(SERVE_RUN)) == 0
    assert not client.keys(f"codeexec:{{{SERVE_RUN}}}:pending:*")


def test_run_code_as_sandboxfusion_answers(service: Server, client: redis.Redis) -> None:
    url = service.url
    ok = run_code(url, code="print(int(input()) + 1)", stdin="41")
    assert ok["status"] == "Success" and ok["message"] == "" and ok["compile_result"] is None
    assert ok["run_result"]["status"] == "Finished" and ok["run_result"]["return_code"] == 0
    assert ok["run_result"]["stdout"] == "42\n" and ok["run_result"]["stderr"] == ""
    assert ok["run_result"]["execution_time"] > 0 and ok["files"] == {}
    # A stdin with no newline at its end, as SandboxFusion's own test sends it.
    assert run_code(url, code="print(int(input()))", stdin="65535")["run_result"]["stdout"] == "65535\n"

    failed = run_code(url, code="x = 1\nassert x == 2")
    assert failed["status"] == "Failed" and failed["run_result"]["status"] == "Finished"
    assert failed["run_result"]["return_code"] == 1
    stderr = failed["run_result"]["stderr"]
    assert stderr.startswith("Traceback (most recent call last):\n  File ") and stderr.endswith("AssertionError\n")
    assert stderr.count("  File ") == 1 and stderr.split("\n")[1].endswith('.py", line 2, in <module>')  # its frame
    syntax = run_code(url, code="int a = 1")["run_result"]
    assert syntax["return_code"] == 1 and "SyntaxError: invalid syntax" in syntax["stderr"]
    assert run_code(url, code="import sys; sys.exit(3)")["run_result"]["return_code"] == 3
    said = run_code(url, code="raise SystemExit('bye')")["run_result"]
    assert (said["return_code"], said["stderr"]) == (1, "bye\n")
    killed = run_code(url, code="import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed["status"] == "Failed" and killed["run_result"]["return_code"] == -9

    # A time limit under a second, as a float, and one as an int: the partial output comes back.
    slow = run_code(url, code="print('started', flush=True)\nwhile True: pass", run_timeout=0.2)
    assert slow["status"] == "Failed" and slow["run_result"]["status"] == "TimeLimitExceeded"
    assert slow["run_result"]["return_code"] is None and slow["run_result"]["stdout"] == "started\n"
    assert run_code(url, code="print(1)", run_timeout=1)["status"] == "Success"

    # Files in nested directories (a null one skipped), fetched back from the working directory and /mnt,
    # which is the run's own: empty at its start, and never the host's.
    secret = base64.b64encode(b"hello, this is a test").decode()
    wrote = run_code(
        url,
        code="import os\nprint(open('dir1/dir2/secret').read(), os.listdir('/mnt'))\n"
        "open('a.txt', 'w').write('secret'); open('/mnt/b', 'w').write('sauce')",
        files={"dir1/dir2/secret": secret, "skipped.txt": None},
        fetch_files=["a.txt", "/mnt/b", "missing.txt", "/etc/hostname"],
        memory_limit_MB=None,
    )
    assert wrote["status"] == "Success", wrote
    assert wrote["run_result"]["stdout"] == "hello, this is a test []\n"
    assert {path: base64.b64decode(data) for path, data in wrote["files"].items()} == {
        "a.txt": b"secret",
        "/mnt/b": b"sauce",
    }
    assert not Path("/mnt/b").exists() or Path("/mnt/b").read_bytes() != b"sauce"
    assert run_code(url, code="import os; print(os.listdir('/mnt'))")["run_result"]["stdout"] == "[]\n"

    # A symbolic link left to fetch a file of the host's is not followed.
    link = run_code(url, code="import os; os.symlink('/etc/passwd', 'p')", fetch_files=["p"])
    assert link["status"] == "Success" and link["files"] == {}

    # pytest FILE: its report on stdout, and its status.
    module = (
        "def test_a():\n    assert 1\n\n"
        "def test_b(tmp_path, capfd):\n    print('x')\n    assert capfd.readouterr().out == 'x\\n'\n"
    )
    assert run_code(url, code=module, language="pytest")["status"] == "Success"
    bad = run_code(url, code=module.replace("== 'x\\n'", "== 'y'"), language="pytest")
    assert bad["status"] == "Failed" and "1 failed, 1 passed" in bad["run_result"]["stdout"]
    assert run_code(url, code=module.replace("== 'x\\n'", "== 'y'"))["status"] == "Success"  # as python

    # A language of SandboxFusion's that codeexec does not run: SandboxFusion's kind of answer.
    swift = run_code(url, code="print(1)", language="swift")
    assert swift["status"] == "SandboxError" and "'swift' is not run by this server" in swift["message"]
    assert swift["run_result"]["status"] == "Error"
    nothing_queued(client)  # every request's keys are gone once it is answered


def test_bad_requests_get_a_clear_4xx_and_queue_nothing(service: Server, client: redis.Redis) -> None:
    def post(body: object) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        return httpx.post(f"{service.url}/run_code", content=content, headers=headers, timeout=60)

    missing = post({"language": "python"})
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["body", "code"]
    wrong_type = post({"code": "print(1)", "run_timeout": "soon"})
    assert wrong_type.status_code == 422 and wrong_type.json()["detail"][0]["loc"] == ["body", "run_timeout"]
    assert post({"code": "print(1)", "language": "brainfuck"}).status_code == 422
    outside = post({"code": "print(1)", "files": {"../escape": "eA=="}})
    assert outside.status_code == 422 and "not a relative path inside the working directory" in outside.text
    assert post({"code": "print(1)", "files": {"a": "not base64!"}}).status_code == 422
    assert post(b"{not json").status_code == 422
    assert post({"code": "print(1)", "run_timeout": -1}).status_code == 422
    batch = httpx.post(f"{service.url}/v1/batch", json={"tests": {}, "samples": [{"code": "x"}]}, timeout=60)
    assert batch.status_code == 422
    unknown_set = {"tests": {"a": {"inputs": ["1"], "outputs": ["1"]}}, "samples": [{"code": "x", "tests": "b"}]}
    response = httpx.post(f"{service.url}/v1/batch", json=unknown_set, timeout=60)
    assert response.status_code == 422 and "no test set named 'b'" in response.text
    assert httpx.get(f"{service.url}/v1/batch/nope", timeout=60).status_code == 404
    nothing_queued(client)


def test_a_token_is_required_where_one_is_set_and_beyond_loopback(
    serve: Callable[..., Server], env: dict[str, str], tmp_path: Path
) -> None:
    refused = codeexec(env, "serve", "--host", "0.0.0.0", "--workers", "0", timeout=60)
    assert refused.returncode == 2 and "needs a bearer token" in refused.stderr
    token = "t" * 32
    (tmp_path / "token").write_text(token + "\n")
    server = serve("--token-file", str(tmp_path / "token"), "--max-queued", "1")
    body = {"code": "print(1)", "language": "python"}
    assert httpx.post(f"{server.url}/run_code", json=body, timeout=60).status_code == 401
    wrong = httpx.post(f"{server.url}/run_code", json=body, headers={"Authorization": "Bearer " + "x" * 32})
    assert wrong.status_code == 401 and "not this server's" in wrong.text
    assert httpx.post(f"{server.url}/t/{'x' * 32}/run_code", json=body, timeout=60).status_code == 401
    # With the token (a header, or the path prefix clients that send no header are given): the request
    # is let in, and with no worker and a queue of one, the first waits and the second is turned away.
    waiting = threading.Thread(
        target=httpx.post,
        args=(f"{server.url}/run_code",),
        kwargs={"json": body, "headers": {"Authorization": f"Bearer {token}"}, "timeout": 60},
        daemon=True,
    )
    waiting.start()
    client = redis.Redis.from_url(env["CODEEXEC_REDIS_URL"], decode_responses=True)
    wait_until(lambda: client.llen(keys.jobs(SERVE_RUN)) == 1, "the first request was not queued")
    turned = httpx.post(f"{server.url}/t/{token}/run_code", json=body, timeout=60)
    assert turned.status_code == 504 and int(turned.headers["Retry-After"]) >= 1


def test_a_body_over_the_limit_is_refused_before_it_is_read(serve: Callable[..., Server], client: redis.Redis) -> None:
    server = serve("--workers", "0", extra_env={"CODEEXEC_SERVE_MAX_BODY_BYTES": "1000"})
    big = {"code": "x = '" + "a" * 2000 + "'", "language": "python"}
    response = httpx.post(f"{server.url}/run_code", json=big, timeout=60)
    assert response.status_code == 413 and "limit of 1000 bytes" in response.text

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it comes
        text = json.dumps(big).encode()
        for start in range(0, len(text), 100):
            yield text[start : start + 100]

    assert httpx.post(f"{server.url}/run_code", content=chunks(), timeout=60).status_code == 413
    nothing_queued(client)


def test_overload_is_answered_at_once_and_nothing_accepted_is_lost(
    serve: Callable[..., Server], start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    server = serve("--max-queued", "2")
    answers: list[dict] = []
    threads = [
        threading.Thread(target=lambda i=i: answers.append(run_code(server.url, code=f"print({i})")), daemon=True)
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    wait_until(lambda: client.llen(keys.jobs(SERVE_RUN)) == 2, "the two requests were not queued")
    turned = httpx.post(f"{server.url}/run_code", json={"code": "print(3)", "language": "python"}, timeout=60)
    assert turned.status_code == 504 and "2 jobs are waiting for a worker" in turned.text
    assert int(turned.headers["Retry-After"]) >= 1
    batch = {"tests": {"default": {"inputs": ["1\n"], "outputs": ["1\n"]}}, "samples": [{"code": "print(input())"}]}
    refused = httpx.post(f"{server.url}/v1/batch", json=batch, timeout=60)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert client.llen(keys.jobs(SERVE_RUN)) == 2  # the turned-away requests queued nothing
    start_worker("w1")
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(answer["run_result"]["stdout"] for answer in answers) == ["0\n", "1\n"]


TESTS = {"default": {"inputs": ["1 2\n", "3 4\n", "10 20\n"], "outputs": ["3\n", "7\n", "30\n"]}}
RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
SAMPLES = [
    {"code": RIGHT, "id": "right"},
    {"code": "```python\nprint(3)\n```", "id": "first-only"},  # right on the first test only
    {"code": "```python\nwhile True: pass\n```", "id": "spins"},
    {"code": "```python\nprint(1 +\n```", "id": "syntax"},
    {"code": "```python\nraise ValueError\n```", "id": "raises"},
    {"code": "a, b = map(int, input().split())\nprint(a + b)", "id": "no-fence"},  # the whole text runs
]


def batch_lines(response: httpx.Response) -> list[dict]:
    return [json.loads(line) for line in response.text.splitlines() if line]


def test_a_batch_streams_each_sample_s_scores_and_codes(service: Server) -> None:
    body = {"tests": TESTS, "samples": SAMPLES, "time_limit_s": 0.5}
    response = httpx.post(f"{service.url}/v1/batch", json=body, timeout=300)
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    first, *lines, done = batch_lines(response)
    assert first["samples"] == 6 and done["done"] and done["samples"] == 6 and done["passed"] == 2
    by_id = {line["id"]: line for line in lines}
    assert {line["index"] for line in lines} == set(range(6))
    assert (by_id["right"]["score"], by_id["right"]["results"]) == (1.0, [True, True, True])
    assert by_id["first-only"]["results"] == [True, False, False]
    assert by_id["first-only"]["score"] == pytest.approx(1 / 3)  # verl's: of the first ten tests
    assert by_id["spins"]["results"] == [-3, -3, -3] and by_id["spins"]["score"] == 0
    assert by_id["syntax"]["results"] == [-2, -2, -2] and by_id["syntax"]["status"] == "syntax_error"
    assert by_id["raises"]["results"] == [-2, -2, -2]
    assert by_id["no-fence"]["score"] == 1.0
    assert all(line["reason"] is None for line in lines if line["id"] != "syntax")

    binary = httpx.post(f"{service.url}/v1/batch", json={**body, "score": "binary", "stream": False}, timeout=300)
    document = binary.json()
    assert document["done"] and [line["score"] for line in document["results"]] == [1, 0, 0, 0, 0, 1]
    assert document["results"][1]["results"] == [True, False]  # stopped at its first failure

    # Call-based tests, in verl's form (each input the text of one JSON value a line).
    calls = {
        "tests": {"add": {"inputs": ["1\n2", "[1]\n[2]"], "outputs": [3, [1, 2]], "fn_name": "add"}},
        "samples": [
            {"code": "```python\ndef add(a, b):\n    return a + b\n```", "tests": "add"},
            {"code": "```python\nclass Solution:\n    def add(self, a, b):\n        return b\n```", "tests": "add"},
        ],
        "stream": False,
    }
    results = httpx.post(f"{service.url}/v1/batch", json=calls, timeout=300).json()["results"]
    assert [line["results"] for line in results] == [[True, True], [False, False]]


def test_a_dropped_client_and_a_restarted_server_lose_nothing(
    serve: Callable[..., Server], start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    server = serve()
    samples = [{"code": RIGHT if i % 2 else "```python\nprint(0)\n```", "id": str(i)} for i in range(12)]
    body = {"batch_id": "grpo-step-7", "tests": TESTS, "samples": samples}
    # The client reads the batch's first line and drops the connection; no worker runs yet.
    with httpx.stream("POST", f"{server.url}/v1/batch", json=body, timeout=60) as response:
        first = json.loads(next(response.iter_lines()))
    assert first == {"batch_id": "grpo-step-7", "samples": 12}
    # The server dies meanwhile, and a new one starts on the same Redis while the workers run the batch.
    server.stop(signal.SIGKILL)
    start_worker("w1", concurrency=2)
    wait_until(lambda: int(client.hget(keys.stats(SERVE_RUN), keys.DONE) or 0) >= 3, "no sample ran")
    again = serve()
    lines = batch_lines(httpx.get(f"{again.url}/v1/batch/grpo-step-7", timeout=300))
    results = [line for line in lines[1:] if "index" in line]
    assert lines[-1]["done"] and sorted(line["index"] for line in results) == list(range(12))
    assert [line["score"] for line in sorted(results, key=lambda line: line["index"])] == [0.0, 1.0] * 6
    # The same POST again re-attaches: nothing runs twice.
    done_before = int(client.hget(keys.stats(SERVE_RUN), keys.DONE))
    assert batch_lines(httpx.post(f"{again.url}/v1/batch", json=body, timeout=300))[-1]["passed"] == 6
    assert int(client.hget(keys.stats(SERVE_RUN), keys.DONE)) == done_before


def test_the_dispatch_closes_however_its_listener_is_cancelled(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """close() ends listen() wherever the cancel finds it: a cancel that comes as the subscription's read
    times out can be lost inside redis-py, and a server's shutdown waited for its listener for good (the
    read made 1 ms long here, so that they meet often)."""
    import asyncio

    from codeexec.producer.service import dispatch as module
    from codeexec.protocol.settings import get_settings

    monkeypatch.setattr(module, "_POLL_S", 0.001)

    async def open_and_close(times: int) -> None:
        for at in range(times):
            dispatch = module.Dispatch.open(server.url, get_settings())
            dispatch.start()
            await asyncio.sleep(at % 20 / 1000)
            closing = asyncio.create_task(dispatch.close())
            ended, _ = await asyncio.wait({closing}, timeout=30)  # it takes a read's 1 ms
            if not ended:  # the cancel was lost: cancel again, so that the test ends
                assert dispatch._listening is not None
                dispatch._listening.cancel()
                await closing
            assert ended, f"close() did not end listen() (time {at})"

    asyncio.run(open_and_close(200))


def test_the_python_client_re_attaches_and_verl_s_batch_hook_scores(service: Server) -> None:
    import asyncio

    from codeexec.producer.service.client import ServiceClient, compute_score

    async def score() -> list[dict]:
        async with ServiceClient(service.url) as client:
            return await client.score(SAMPLES[:2], TESTS, time_limit_s=2)

    assert [line["score"] for line in asyncio.run(score())] == [1.0, pytest.approx(1 / 3)]
    truth = json.dumps(TESTS["default"])
    # Called as verl's BatchRewardManager calls it (verl/workers/reward_manager/batch.py), once per batch.
    scores = compute_score(
        data_sources=["codecontests"] * 3,
        solution_strs=[RIGHT, SAMPLES[1]["code"], RIGHT],
        ground_truths=[truth, truth, TESTS["default"]],
        extra_infos=[{}, {}, {}],
        url=service.url,
    )
    assert scores == [1.0, pytest.approx(1 / 3), 1.0]


def test_the_service_and_an_evaluation_share_the_workers(
    serve: Callable[..., Server],
    start_worker: Callable[..., Worker],
    env: dict[str, str],
    client: redis.Redis,
    tmp_path: Path,
) -> None:
    """Both queued before a worker starts, the evaluation first: the fair-share rule serves them in turn,
    so each has results before the other's last (served in order, the batch would start after the
    evaluation's last result)."""
    server = serve()
    suite = make_suite(tmp_path, tasks=8, per_task=5)
    submit(env, suite, "eval-a")
    body = {"tests": TESTS, "samples": [{"code": RIGHT}] * 40, "stream": False}
    answered: list[dict] = []
    sending = threading.Thread(
        target=lambda: answered.append(httpx.post(f"{server.url}/v1/batch", json=body, timeout=600).json())
    )
    sending.start()
    wait_until(lambda: client.llen(keys.jobs(SERVE_RUN)) == 40, "the batch was not queued")
    start_worker("w1", concurrency=1)
    sending.join(timeout=600)
    assert answered and answered[0]["passed"] == 40
    wait_done(client, "eval-a", suite.total)
    first, last = keys.FIRST_RESULT, keys.LAST_RESULT
    evaluation = {field: float(client.hget(keys.stats("eval-a"), field)) for field in (first, last)}
    service = {field: float(client.hget(keys.stats(SERVE_RUN), field)) for field in (first, last)}
    assert service[first] < evaluation[last] and evaluation[first] < service[last]


def test_files_are_written_and_fetched_inside_the_working_directory_only(tmp_path: Path) -> None:
    from codeexec.worker.process import workfiles

    assert workfiles.path_parts("a/./b//c.txt") == ["a", "b", "c.txt"]
    for outside in ("/etc/passwd", "../x", "a/../../x", "", "a\0b"):
        assert workfiles.path_parts(outside) is None
        with pytest.raises(ValueError):
            workfiles.put(str(tmp_path), {outside: b"x"})
    workfiles.put(str(tmp_path), {"d/e/f.txt": b"inside"})
    (tmp_path / "link").symlink_to("/etc/hostname")
    (tmp_path / "dirlink").symlink_to(tmp_path / "d")
    (tmp_path / ".codeexec-scratch" / "mnt").mkdir(parents=True)
    (tmp_path / ".codeexec-scratch" / "mnt" / "b").write_bytes(b"sauce")
    fetched = workfiles.fetch(str(tmp_path), ["d/e/f.txt", "link", "dirlink/e/f.txt", "d", "/mnt/b", "/mnt/../etc"])
    assert {path: base64.b64decode(data) for path, data in fetched.items()} == {
        "d/e/f.txt": b"inside",
        "/mnt/b": b"sauce",
    }


def test_compute_score_says_what_it_cannot_score() -> None:
    from codeexec.producer.service.client import compute_score

    truth = {"inputs": ["", ""], "outputs": [None, None], "assert_case": ["assert f(1) == 2", "assert f(2) == 3"]}
    with pytest.raises(ValueError, match="assert_case tests"):
        compute_score(["apps"], ["def f(x):\n    return x + 1"], [truth], url="http://127.0.0.1:9")
