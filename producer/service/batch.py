"""Batch scoring (POST /v1/batch): many samples against test sets sent once, as GRPO scores its n rollouts
of a prompt, judged by the competitive-programming judge (stdin/stdout and call-based tests, its modes:
docs/competitive.md); results streamed as JSON lines in the order they finish.

A batch has an id (the client's, or one it is given in the first line): a client whose connection
drops asks for it again (GET /v1/batch/{id}, or the same POST) and gets every result, those in already
first; nothing is run twice. Each test set is a task of the service's run (producer/service/dispatch.py), each
sample one of its samples.

Each sample's line carries its score (binary: 1 if every test passes, stopping at the first failure;
fraction: tests passed / tests; verl: the fraction of the first ten tests, every test run, as verl's
continuous reward), each test's result in verl's codes (true, false, -2 runtime error, -3 time limit:
Python has no compile step, so a syntax error is -2, as `python FILE` fails on every test), and where it
could not be judged, a reason saying whether trying again can help.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from codeexec.producer.inputs.programs import PYTHON
from codeexec.producer.service.dispatch import Dispatch, Overloaded
from codeexec.protocol import keys
from codeexec.protocol.kinds import CallTests, JudgeMode, StdinTests
from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.worker.languages import LANGUAGES, name_of

MAX_SAMPLES = 100_000
VERL_TESTS = 10  # verl's continuous score counts the first ten tests
#: verl's result code of each verdict letter (StoredResult.verdicts; Verdict.letter).
_CODES: dict[str, bool | int] = {"A": True, "W": False, "T": -3, "R": -2, "M": -2, "O": -2}
_EXTRACTION = {"verl": "last_python", "lcb": "lcb", "first": "first"}


class TestSet(BaseModel):
    """A problem's tests, as verl's and APPS' ground truth gives them: inputs and the outputs expected;
    with fn_name, each input is a call's arguments (a list, a dict of keyword arguments, or verl's text of
    one JSON value a line)."""

    model_config = ConfigDict(extra="forbid")

    inputs: list[Any] = Field(min_length=1)
    outputs: list[Any]
    fn_name: str | None = None
    time_limit_s: float | None = Field(None, gt=0, le=600, description="Each test's limit; else the batch's.")
    memory_limit_MB: int | None = Field(None, gt=0, description="Else the batch's.")


class BatchSample(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="A model's answer (its code is extracted as `extract` says) or a program.")
    tests: str = Field("default", description="The name of its test set in the batch's `tests`.")
    id: str | None = Field(None, description="The client's name for it, given back in its result.")
    language: str = Field(
        "python", description="Its program's language: python, or another codeexec runs (docs/competitive.md)."
    )

    @field_validator("language")
    @classmethod
    def _a_language(cls, language: str) -> str:
        if language.strip().lower() in PYTHON:
            return "python"
        name = name_of(language)
        if name is None:
            raise ValueError(f"{language!r} is not a language codeexec runs (it runs python, {', '.join(LANGUAGES)})")
        return name


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$",
        description="The client's id for the batch: sent again, it re-attaches to the batch, nothing is rerun.",
    )
    tests: dict[str, TestSet] = Field(min_length=1, description="Test sets by name, each sent once.")
    samples: list[BatchSample] = Field(min_length=1, max_length=MAX_SAMPLES)
    score: Literal["binary", "fraction", "verl"] = Field(
        "verl", description="binary: stop at the first failure; fraction, verl: run every test."
    )
    mode: JudgeMode = Field("exact", description="How outputs are compared (docs/competitive.md): verl's by default.")
    extract: Literal["verl", "lcb", "first", "none"] = Field(
        "verl", description="How code is found in a sample: verl's, LiveCodeBench's, the first block, or none."
    )
    time_limit_s: float = Field(10.0, gt=0, le=600, description="Each test's time limit (verl's default).")
    memory_limit_MB: int | None = Field(1024, gt=0, description="Address space beyond its start (verl's default).")
    stream: bool = Field(True, description="JSON lines as results come; false: one JSON document at the end.")

    @model_validator(mode="after")
    def _named_sets(self) -> BatchRequest:
        for at, sample in enumerate(self.samples):
            if sample.tests not in self.tests:
                raise ValueError(f"samples[{at}]: no test set named {sample.tests!r} (sets: {sorted(self.tests)})")
            if sample.language != "python" and self.tests[sample.tests].fn_name is not None:
                raise ValueError(f"samples[{at}]: a {sample.language} program takes stdin tests, not calls of fn_name")
        return self


def group(set_name: str, language: str) -> str:
    """What a batch's samples of one test set in one language are: a task of their own (its tests are
    judged in that language)."""
    return set_name if language == "python" else f"{set_name}\x00{language}"


class BatchRecord(BaseModel):
    """A batch as the service keeps it (keys.batch()), for its client to re-attach."""

    batch_id: str
    created: float
    score: Literal["binary", "fraction", "verl"]
    sets: dict[str, str] = Field(description="Test set name (and language: group()) -> its task's id.")
    samples: list[tuple[str, int, str | None]] = Field(
        description="(set and language: group(), index in its task, id), in request order."
    )


def case_tests(tests: TestSet, request: BatchRequest, language: str = "python") -> StdinTests | CallTests:
    """The competitive-programming judge's tests of a set, for programs in `language`: call-based where the
    set names a function (fn_name), else stdin tests; ValueError says what is wrong with it."""
    memory = tests.memory_limit_MB or request.memory_limit_MB
    shared = {
        "outputs": tests.outputs,
        "mode": request.mode,
        "time_limit_s": tests.time_limit_s or request.time_limit_s,
        "memory_bytes": memory << 20 if memory else None,
        "all_tests": request.score != "binary",
        "extraction": _EXTRACTION.get(request.extract, "first"),
    }
    if tests.fn_name is None:
        return StdinTests(language=language, inputs=tests.inputs, **shared)
    return CallTests(
        language=language, entry_point=tests.fn_name, inputs=[_arguments(given) for given in tests.inputs], **shared
    )


def _arguments(given: Any) -> Any:
    """A call's arguments: verl's text of one JSON value a line becomes their list."""
    if isinstance(given, str):
        return [json.loads(line) for line in given.splitlines() if line.strip()]
    return given


def sample_line(record: BatchRecord, position: int, stored: StoredResult) -> dict[str, Any]:
    """A sample's result line."""
    grouped, _, sample_id = record.samples[position]
    set_name, _, language = grouped.partition("\x00")
    results: list[bool | int] = [_CODES[letter] for letter in stored.verdicts]
    if stored.exit_code is Outcome.SYNTAX_ERROR:
        # Every test would fail so: as `python FILE` fails (-2), or as a compile fails, verl's -4.
        results = [-4 if language else -2] * (stored.total if record.score != "binary" else 1)
    if record.score == "verl":
        counted = results[:VERL_TESTS] + [False] * (min(stored.total, VERL_TESTS) - len(results[:VERL_TESTS]))
        score = sum(code is True for code in counted) / len(counted) if counted else 0.0
    elif record.score == "fraction":
        score = stored.passed / stored.total if stored.total else 0.0
    else:
        score = float(stored.exit_code is Outcome.PASS)
    reason = None
    if stored.exit_code is Outcome.INFRA_ERROR:
        reason = {"retry": True, "why": stored.detail}
    elif not stored.verdicts and stored.exit_code is not Outcome.PASS:
        reason = {"retry": False, "why": stored.detail}
    return {
        "index": position,
        "id": sample_id,
        "tests": set_name,
        "score": score,
        "passed": stored.passed,
        "total": stored.total,
        "results": results,
        "status": stored.exit_code.value,
        "detail": stored.detail,
        "time_s": stored.charged_s,
        "reason": reason,
    }


async def results(dispatch: Dispatch, record: BatchRecord) -> AsyncIterator[dict[str, Any]]:
    """Every sample's line, those in already first, then in the order they finish; a last line says
    the batch is done."""
    began = time.monotonic()
    position = {(set_name, index): at for at, (set_name, index, _) in enumerate(record.samples)}
    counts = {name: sum(s == name for s, _, _ in record.samples) for name in record.sets}
    lines: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def follow(set_name: str) -> None:
        async for index, stored in dispatch.results(record.sets[set_name], counts[set_name]):
            await lines.put(sample_line(record, position[set_name, index], stored))

    followers = [asyncio.create_task(follow(name)) for name in record.sets]
    try:
        passed = 0
        for _ in record.samples:
            line = await lines.get()
            passed += line["status"] == "pass"
            yield line
        yield {
            "done": True,
            "batch_id": record.batch_id,
            "samples": len(record.samples),
            "passed": passed,
            "elapsed_s": round(time.monotonic() - began, 3),
        }
    finally:
        for follower in followers:
            follower.cancel()
        await asyncio.gather(*followers, return_exceptions=True)


def add_routes(app: FastAPI, state: dict[str, Dispatch], busy: Callable[[Overloaded, int], JSONResponse]) -> None:
    @app.post("/v1/batch", responses={429: {"description": "Too busy: retry after Retry-After seconds."}})
    async def submit_batch(request: BatchRequest) -> Any:
        """Score the samples against their test sets. JSON lines (application/x-ndjson): one per sample as it
        finishes, then {"done": true, ...}; with "stream": false, one document once all are in."""
        dispatch = state["dispatch"]
        batch_id = request.batch_id or f"b-{secrets.token_hex(8)}"
        record = await _load(dispatch, batch_id)
        if record is None:
            try:
                record = await _store(dispatch, batch_id, request)
            except Overloaded as exc:
                return busy(exc, 429)
        return await _respond(dispatch, record, request.stream)

    @app.get("/v1/batch/{batch_id}")
    async def batch_results(batch_id: str, stream: bool = True) -> Any:
        """A batch's results again (a client that lost its connection): all that are in, then the rest."""
        dispatch = state["dispatch"]
        record = await _load(dispatch, batch_id)
        if record is None:
            raise HTTPException(404, f"no batch {batch_id!r} here (it may have been forgotten after its time)")
        return await _respond(dispatch, record, stream)


async def _load(dispatch: Dispatch, batch_id: str) -> BatchRecord | None:
    raw = await dispatch.aio.get(keys.batch(dispatch.name, batch_id))
    return None if raw is None else BatchRecord.model_validate_json(raw)


async def _store(dispatch: Dispatch, batch_id: str, request: BatchRequest) -> BatchRecord:
    """Queue the batch, unless the service is over its load."""
    sets: dict[str, str] = {}
    tasks: list[tuple[str, Problem, list[Sample]]] = []
    kind = SampleKind.SOLUTION if request.extract == "none" else SampleKind.GENERATION
    groups: dict[tuple[str, str], list[Sample]] = {}
    for sample in request.samples:
        groups.setdefault((sample.tests, sample.language), []).append(Sample(kind=kind, text=sample.code))
    for name, tests in request.tests.items():
        for language in dict.fromkeys([*(lang for set_name, lang in groups if set_name == name), "python"]):
            try:
                cases = case_tests(tests, request, language)
            except (ValueError, ValidationError) as exc:
                raise HTTPException(422, f"tests[{name!r}]: {exc}") from None
            task_id = sets[group(name, language)] = f"{batch_id}/{secrets.token_hex(4)}"
            samples = groups.get((name, language))
            if samples:
                tasks.append((task_id, Problem(task_id=task_id, tests=cases), samples))
    indices: dict[str, int] = {}
    placed = []
    for sample in request.samples:
        grouped = group(sample.tests, sample.language)
        placed.append((grouped, indices.setdefault(grouped, 0), sample.id))
        indices[grouped] += 1
    record = BatchRecord(batch_id=batch_id, created=time.time(), score=request.score, sets=sets, samples=placed)
    kept = await dispatch.aio.set(
        keys.batch(dispatch.name, batch_id), record.model_dump_json(), nx=True, ex=int(dispatch.keep_s)
    )
    if not kept:
        raw = await dispatch.aio.get(keys.batch(dispatch.name, batch_id))
        return BatchRecord.model_validate_json(raw) if raw else record  # another request stored it first
    try:
        await dispatch.submit(tasks)
    except Overloaded:
        await dispatch.aio.delete(keys.batch(dispatch.name, batch_id))
        raise
    return record


async def _respond(dispatch: Dispatch, record: BatchRecord, stream: bool) -> Any:
    if stream:

        async def lines() -> AsyncIterator[bytes]:
            yield (json.dumps({"batch_id": record.batch_id, "samples": len(record.samples)}) + "\n").encode()
            async for line in results(dispatch, record):
                yield (json.dumps(line) + "\n").encode()

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    collected = [line async for line in results(dispatch, record)]
    done = collected.pop()
    return {**done, "results": sorted(collected, key=lambda line: line["index"])}
