"""The HTTP service under load, loopback only and bounded: `codeexec serve` beside SandboxFusion's own
server, the same requests at the same concurrency, measured one after the other in one run.

- /run_code at each concurrency (64, 256, 512 clients): APPS-150's ChatGPT programs that ExecEval judged
  solved (stdin problems: ../shared/data/competitive/apps-mapcoder), one request per test as verl's
  reward sends them (code, stdin, run_timeout 10, memory_limit_MB 1024), each client with verl's HTTP
  timeout (compile + run + 10 = 30 s): requests/s, p50 and p99 latency, errors (non-200, a transport
  error), timeouts, and answers that are right (stdout as verl compares it): the same for both servers.
- the same for C++ and Java (--languages python,cpp,java, --programs DIR): the caller's translations of
  those programs to APPS-150's problems, language "cpp" / "java", compile_timeout and run_timeout 10 as
  verl sends them, sample by sample with each sample's code its own (bench/service_programs.py says why,
  and what the programs are). Java's memory_limit_MB is --java-memory-mb (verl's 1024 by default): under
  SandboxFusion's `isolation: none` it is an RLIMIT_AS, in which a JVM that sizes its heap from the
  machine's memory cannot start (javac neither): every answer fails to compile, fast. A verl run that
  wants Java scored there must send no limit (memory_limit_mb -1), which --java-memory-mb -1 measures.
- a trivial program's round trip, one request at a time, warm: p50 and p90 (Python).
- the batch endpoint: every such program as one batch against its problem's tests (verl's score), its
  samples/s against the floor (the programs' own time, as codeexec charged it, over the workers) and
  against the same samples sent to each server as verl sends them (a request per test, 64 at a time).

codeexec: `codeexec serve` on its private Valkey with --workers local workers (a data directory of its
own). SandboxFusion: its server (one uvicorn process, isolation none, as its Makefile runs it) started by
a script of the caller's (--sf-start PORT prints its pid): installed from its public source outside this
repository (SandboxFusion needs a conda-like runtime; see docs/benchmarks.md for how it was set up here).
It compiles every request's program anew (g++ -std=c++17 with its -l flags; javac, then java -ea).

    python bench/service.py [--concurrency 64,256,512] [--requests 2000] [--workers 2]
                            [--languages python,cpp,java --programs DIR] [--java-memory-mb 1024]
                            [--sf-start /work/sfref/start_sf.sh] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from service_programs import (
    VERL_MEMORY_MB,
    Program,
    compiled_programs,
    requests_of,
    sample_requests,
    solved_programs,
)

VERL_TIMEOUT_S = 30.0  # verl's HTTP timeout: compile_timeout + run_timeout + 10
BATCH_CONCURRENCY = 64  # verl's reward.sandbox_fusion.max_concurrent


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


async def batch(url: str, programs: list[Program], workers: int) -> dict[str, Any]:
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


async def per_test(url: str, programs: list[Program]) -> dict[str, Any]:
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
        # Its whole process group where the script made it one (setsid): uvicorn's SIGTERM waits for the
        # requests in hand, and the compiles of those the clients gave up on (a timeout) would run on.
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGTERM)


def settle(timeout_s: float = 600.0) -> None:
    """Wait until the machine is idle again (its CPUs at least 85 % idle over 2 s): a server may go on with
    requests whose clients gave up (SandboxFusion compiles each to its end), which would slow the next level."""

    def idle_and_total() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return fields[3] + fields[4], sum(fields)

    began = time.monotonic()
    while time.monotonic() - began < timeout_s:
        (idle0, total0), _ = idle_and_total(), time.sleep(2)
        idle1, total1 = idle_and_total()
        if (idle1 - idle0) >= 0.85 * (total1 - total0):
            return
    print(f"  the machine was still busy after {timeout_s:.0f} s: measuring anyway", flush=True)


Requests = Callable[[int], list[tuple[dict, str]]]  # `count` requests of a language, with what each should print


def key_of(language: str) -> str:
    """Where a language's /run_code figures go: Python's where they always were."""
    return "run_code" if language == "python" else f"run_code_{language}"


async def measure(
    url: str, levels: list[int], count: int, languages: dict[str, Requests], programs: list[Program], workers: int
) -> dict:
    """Each language in turn: its /run_code at each concurrency (Python's round trip first, its batch after)."""
    found: dict[str, Any] = {}
    for language, requests in languages.items():
        if language == "python":
            found["round_trip"] = await round_trips(url, 200)
        # Warm every worker (and a compiled language's compiler): fewer of a compiled language's, each a
        # compile on SandboxFusion.
        await load(url, requests(200 if language == "python" else 32), 16)
        found[key_of(language)] = {}
        for level in levels:
            settle()
            found[key_of(language)][level] = await load(url, requests(max(count, 2 * level)), level)
            print(f"  {language} {level:4d} clients: {found[key_of(language)][level]}", flush=True)
        if language == "python":
            found["per_test"] = await per_test(url, programs)
            if workers:
                found["batch"] = await batch(url, programs, workers)
    return found


def languages_of(args: argparse.Namespace, programs: list[Program]) -> dict[str, Requests]:
    found: dict[str, Requests] = {}
    for language in args.languages.split(","):
        if language == "python":
            found[language] = partial(requests_of, programs)
            continue
        if args.programs is None:
            raise SystemExit(f"{language} needs --programs DIR (bench/service_programs.py says what it holds)")
        compiled = compiled_programs(args.programs, language)
        memory = args.java_memory_mb if language == "java" else VERL_MEMORY_MB
        print(f"{language}: {len(compiled)} programs, {sum(len(i) for _, i, _ in compiled)} tests, memory {memory} MB")
        found[language] = partial(sample_requests, compiled, language=language, memory_mb=memory)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="64,256,512")
    parser.add_argument("--requests", type=int, default=2000, help="per concurrency level (at least 2 a client)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--languages", default="python", help="of python, cpp, java (comma-separated)")
    parser.add_argument("--programs", type=Path, help="DIR/cpp/<APPS-150 id>.cpp, DIR/java/<id>.java")
    parser.add_argument("--java-memory-mb", type=int, default=VERL_MEMORY_MB, help="-1: none (see above)")
    parser.add_argument("--sf-start", help="a script that starts SandboxFusion's server on PORT and prints its pid")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    levels = [int(level) for level in args.concurrency.split(",")]
    programs = solved_programs()
    print(f"{len(programs)} programs, {sum(len(i) for _, i, _ in programs)} tests; {os.cpu_count()} cores")
    languages = languages_of(args, programs)
    results: dict[str, Any] = {"cores": os.cpu_count(), "workers": args.workers, "languages": list(languages)}
    print("codeexec serve:")
    with codeexec_server(args.workers) as url:
        results["codeexec"] = asyncio.run(measure(url, levels, args.requests, languages, programs, args.workers))
    if args.sf_start:
        print("SandboxFusion:")
        with sandboxfusion_server(args.sf_start) as url:
            results["sandboxfusion"] = asyncio.run(measure(url, levels, args.requests, languages, programs, 0))
    summarize(results, levels)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def summarize(results: dict[str, Any], levels: list[int]) -> None:
    ours, theirs = results["codeexec"], results.get("sandboxfusion")
    if "round_trip" in ours:
        print(f"round trip p50: codeexec {ours['round_trip']['p50_ms']} ms", end="")
        print(f", SandboxFusion {theirs['round_trip']['p50_ms']} ms" if theirs else "")
    for language in results["languages"]:
        key = key_of(language)
        for level in levels:
            mine = ours[key][level]
            line = f"{language} {level:4d} clients: codeexec {mine['requests_per_s']} req/s, {mine['right']} right"
            if theirs:
                other = theirs[key][level]
                ratio = mine["requests_per_s"] / other["requests_per_s"]
                line += f"; SandboxFusion {other['requests_per_s']} req/s, {other['right']} right: {ratio:.2f}x"
            print(line)
    if "batch" in ours:
        b = ours["batch"]
        print(
            f"batch: {b['samples_per_s']} samples/s ({b['samples']} samples, {b['tests']} tests), floor "
            f"{b['floor_samples_per_s']}; a request per test: codeexec {ours['per_test']['samples_per_s']}"
            + (f", SandboxFusion {theirs['per_test']['samples_per_s']} samples/s" if theirs else "")
        )


if __name__ == "__main__":
    main()
