"""The HTTP service under load, loopback only and bounded: `codeexec serve` beside SandboxFusion's own
server, the same requests at the same concurrency, measured one after the other in one run.

- /run_code at each concurrency (64, 256, 512 clients): APPS-150's ChatGPT programs that ExecEval judged
  solved (stdin problems: ../shared/data/competitive/apps-mapcoder), one request per test as verl's
  reward sends them (code, stdin, run_timeout 10, memory_limit_MB 1024), each client with verl's HTTP
  timeout (compile + run + 10 = 30 s): requests/s, p50 and p99 latency, errors (non-200, a transport
  error), timeouts, and answers that are right (stdout as verl compares it): the same for both servers.
- a trivial program's round trip, one request at a time, warm: p50 and p90.
- the batch endpoint: every such program as one batch against its problem's tests (verl's score), its
  samples/s against the floor (the programs' own time, as codeexec charged it, over the workers) and
  against the same samples sent to each server as verl sends them (a request per test, 64 at a time).

codeexec: `codeexec serve` on its private Valkey with --workers local workers (a data directory of its
own). SandboxFusion: its server (one uvicorn process, isolation none, as its Makefile runs it) started by
a script of the caller's (--sf-start PORT prints its pid): installed from its public source outside this
repository (SandboxFusion needs a conda-like runtime; see docs/benchmarks.md for how it was set up here).

    python bench/service.py [--concurrency 64,256,512] [--requests 2000] [--workers 2]
                            [--sf-start /work/sfref/start_sf.sh] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.models import CaseTests

APPS = Path(__file__).resolve().parents[2] / "shared" / "data" / "competitive" / "apps-mapcoder"
VERL_TIMEOUT_S = 30.0  # verl's HTTP timeout: compile_timeout + run_timeout + 10
BATCH_CONCURRENCY = 64  # verl's reward.sandbox_fusion.max_concurrent


def solved_programs() -> list[tuple[str, list[str], list[str]]]:
    """(program, inputs, outputs) of every ChatGPT program ExecEval judged solved, on a stdin problem."""
    problems = load_problems(str(APPS / "selected150.jsonl"))
    found = []
    for path in sorted(APPS.glob("ChatGPT-*.jsonl")):
        for line in path.open():
            record = json.loads(line)
            cases = problems[str(record["id"])].tests
            if record["is_solved"] and isinstance(cases, CaseTests) and cases.kind == "stdin":
                found.append((record["source_codes"][0], list(cases.inputs), list(cases.outputs)))
    return found


def requests_of(programs: list[tuple[str, list[str], list[str]]], count: int) -> list[tuple[dict, str]]:
    """`count` verl-style requests (a program on one test's input) and the output each should print."""
    every = [
        (program, given, wanted)
        for program, inputs, outputs in programs
        for given, wanted in zip(inputs, outputs, strict=True)
    ]
    random.Random(0).shuffle(every)
    chosen = (every * (count // len(every) + 1))[:count]
    body = {"language": "python", "run_timeout": 10, "compile_timeout": 10, "memory_limit_MB": 1024}
    return [({**body, "code": program, "stdin": given}, wanted) for program, given, wanted in chosen]


class Connection:
    """One client's keep-alive HTTP/1.1 connection, with as little of the client's own work as can be: at
    512 clients httpx alone takes more CPU than the server it measures (25 s of the machine's 2 cores
    over a run here), and the client shares the machine with the servers."""

    def __init__(self, url: str) -> None:
        address = httpx.URL(url)
        self.host, self.port = address.host, address.port

    async def __aenter__(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()

    async def post(self, path: str, body: dict) -> tuple[int, dict]:
        data = json.dumps(body).encode()
        head = f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
        self.writer.write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        await self.writer.drain()
        status, _, fields = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").partition("\r\n")
        length = next(
            int(line.split(":")[1]) for line in fields.split("\r\n") if line.lower().startswith("content-length")
        )
        return int(status.split()[1]), json.loads(await self.reader.readexactly(length))


async def load(url: str, requests: list[tuple[dict, str]], concurrency: int) -> dict[str, Any]:
    """Send the requests, `concurrency` at a time (a connection each), each with verl's deadline."""
    latencies: list[float] = []
    counts = {"errors": 0, "timeouts": 0, "right": 0}
    queue: asyncio.Queue[tuple[dict, str]] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)

    async def one_client() -> None:
        while not queue.empty():
            try:
                async with Connection(url) as connection:
                    while not queue.empty():
                        body, wanted = queue.get_nowait()
                        began = time.monotonic()
                        try:
                            status, answer = await asyncio.wait_for(connection.post("/run_code", body), VERL_TIMEOUT_S)
                        except asyncio.TimeoutError:
                            counts["timeouts"] += 1
                            break  # a new connection, as a client that gave up makes
                        latencies.append(time.monotonic() - began)
                        if status != 200:
                            counts["errors"] += 1
                            continue
                        stdout = (answer.get("run_result") or {}).get("stdout") or ""
                        right = answer["status"] == "Success" and stdout.rstrip("\n") == wanted.rstrip("\n")
                        counts["right"] += right
            except (OSError, asyncio.IncompleteReadError, ValueError):
                counts["errors"] += 1

    began = time.monotonic()
    await asyncio.gather(*(one_client() for _ in range(concurrency)))
    elapsed = time.monotonic() - began
    return {
        "requests": len(requests),
        "requests_per_s": round(len(requests) / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
        "p99_ms": round(1000 * statistics.quantiles(latencies, n=100)[98], 1) if len(latencies) > 1 else None,
        **counts,
    }


async def round_trips(url: str, count: int) -> dict[str, float]:
    """A trivial program's round trip, one request at a time, after a warm-up."""
    async with Connection(url) as connection:
        times, wrong = [], 0
        for at in range(count + 20):
            began = time.monotonic()
            status, answer = await connection.post("/run_code", {"code": "print(1)", "language": "python"})
            wrong += status != 200 or (answer.get("run_result") or {}).get("stdout") != "1\n"
            if at >= 20:
                times.append(time.monotonic() - began)
    cuts = statistics.quantiles(times, n=10)
    return {"p50_ms": round(1000 * statistics.median(times), 2), "p90_ms": round(1000 * cuts[8], 2), "wrong": wrong}


async def batch(url: str, programs: list[tuple[str, list[str], list[str]]], workers: int) -> dict[str, Any]:
    """Every program as one batch (verl's score): samples/s, and the floor its programs' own time sets."""
    tests = {f"p{at}": {"inputs": inputs, "outputs": outputs} for at, (_, inputs, outputs) in enumerate(programs)}
    samples = [{"code": program, "tests": f"p{at}"} for at, (program, _, _) in enumerate(programs)]
    body = {"tests": tests, "samples": samples, "extract": "none", "stream": False}
    began = time.monotonic()
    async with httpx.AsyncClient(timeout=3600) as client:
        response = await client.post(f"{url}/v1/batch", json=body)
    elapsed = time.monotonic() - began
    response.raise_for_status()
    lines = response.json()["results"]
    own = sum(line["time_s"] for line in lines)
    return {
        "samples": len(lines),
        "tests": sum(len(inputs) for _, inputs, _ in programs),
        "passed": sum(line["score"] == 1.0 for line in lines),
        "samples_per_s": round(len(lines) / elapsed, 1),
        "floor_samples_per_s": round(len(lines) / (own / workers), 1),
    }


async def per_test(url: str, programs: list[tuple[str, list[str], list[str]]]) -> dict[str, Any]:
    """The same samples as verl sends them: a request per test, 64 at a time; samples/s."""
    every = [
        ({"language": "python", "run_timeout": 10, "memory_limit_MB": 1024, "code": p, "stdin": i}, o)
        for p, inputs, outputs in programs
        for i, o in zip(inputs, outputs, strict=True)
    ]
    found = await load(url, every, BATCH_CONCURRENCY)
    return {"samples_per_s": round(len(programs) * found["requests_per_s"] / len(every), 1), **found}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process is None or process.poll() is None, "the server died"
        try:
            if httpx.get(f"{url}/v1/ping", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


@contextmanager
def codeexec_server(workers: int) -> Iterator[str]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-service-") as data:
        env = {**os.environ, "CODEEXEC_DATA_DIR": data, "CODEEXEC_KEEP_WARM_S": "0"}
        env.pop("CODEEXEC_REDIS_URL", None)
        command = [
            sys.executable,
            "-m",
            "codeexec.producer.entry.cli",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
        ]
        process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for(url, process)
            yield url
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=120)


@contextmanager
def sandboxfusion_server(start: str) -> Iterator[str]:
    port = free_port()
    pid = int(subprocess.run([start, str(port)], capture_output=True, text=True, check=True).stdout.split()[0])
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(url)
        yield url
    finally:
        os.kill(pid, signal.SIGTERM)


async def measure(url: str, levels: list[int], count: int, programs: list, workers: int, batched: bool) -> dict:
    found: dict[str, Any] = {"round_trip": await round_trips(url, 200), "run_code": {}}
    await load(url, requests_of(programs, 200), 16)  # warm every worker
    for level in levels:
        found["run_code"][level] = await load(url, requests_of(programs, max(count, 2 * level)), level)
        print(f"  {level:4d} clients: {found['run_code'][level]}", flush=True)
    found["per_test"] = await per_test(url, programs)
    if batched:
        found["batch"] = await batch(url, programs, workers)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="64,256,512")
    parser.add_argument("--requests", type=int, default=2000, help="per concurrency level (at least 2 a client)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sf-start", help="a script that starts SandboxFusion's server on PORT and prints its pid")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    levels = [int(level) for level in args.concurrency.split(",")]
    programs = solved_programs()
    print(f"{len(programs)} programs, {sum(len(i) for _, i, _ in programs)} tests; {os.cpu_count()} cores")
    results: dict[str, Any] = {"cores": os.cpu_count(), "workers": args.workers}
    print("codeexec serve:")
    with codeexec_server(args.workers) as url:
        results["codeexec"] = asyncio.run(measure(url, levels, args.requests, programs, args.workers, True))
    if args.sf_start:
        print("SandboxFusion:")
        with sandboxfusion_server(args.sf_start) as url:
            results["sandboxfusion"] = asyncio.run(measure(url, levels, args.requests, programs, args.workers, False))
    ours, theirs = results["codeexec"], results.get("sandboxfusion")
    print(f"round trip p50: codeexec {ours['round_trip']['p50_ms']} ms", end="")
    print(f", SandboxFusion {theirs['round_trip']['p50_ms']} ms" if theirs else "")
    for level in levels:
        line = f"{level:4d} clients: codeexec {ours['run_code'][level]['requests_per_s']} req/s"
        if theirs:
            ratio = ours["run_code"][level]["requests_per_s"] / theirs["run_code"][level]["requests_per_s"]
            line += f", SandboxFusion {theirs['run_code'][level]['requests_per_s']} req/s: {ratio:.2f}x"
        print(line)
    b = ours["batch"]
    print(
        f"batch: {b['samples_per_s']} samples/s ({b['samples']} samples, {b['tests']} tests), floor "
        f"{b['floor_samples_per_s']}; a request per test: codeexec {ours['per_test']['samples_per_s']}"
        + (f", SandboxFusion {theirs['per_test']['samples_per_s']} samples/s" if theirs else "")
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
