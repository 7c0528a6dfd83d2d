"""A client of `codeexec serve` (producer/service/endpoints.py), and reward functions that plug it into RL trainers.

    async with ServiceClient("http://127.0.0.1:8080") as client:
        lines = await client.score(samples, tests={"default": {"inputs": ["1 2\\n"], "outputs": ["3\\n"]}})

`compute_score` is verl's batch reward hook (reward.custom_reward_function with the BatchRewardManager:
one call per training batch), `trl_reward` a TRL GRPOTrainer reward function: both send the whole batch
in one request, each distinct ground truth once, and return the scores in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

#: Where the reward functions find the service unless told: the variable, else loopback's default port.
URL_VARIABLE, DEFAULT_URL = "CODEEXEC_SERVE_URL", "http://127.0.0.1:8080"
_RETRIES = 8  # of a batch turned away (429) or whose connection dropped, each after Retry-After or backoff


class ServiceError(Exception):
    """The service said no (a 4xx other than 429), or could not be reached after every retry."""


class ServiceClient:
    """An async client of `codeexec serve`: /run_code, and batches that survive a dropped connection."""

    def __init__(self, url: str = DEFAULT_URL, token: str | None = None, timeout_s: float = 600.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=timeout_s)

    async def __aenter__(self) -> ServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def run_code(self, code: str, **fields: Any) -> dict[str, Any]:
        """SandboxFusion's /run_code: `fields` are its request's (stdin, run_timeout, files, ...)."""
        response = await self._http.post("/run_code", json={"code": code, "language": "python", **fields})
        _raise_for(response)
        return response.json()

    async def stream(
        self, samples: Sequence[str | dict[str, Any]], tests: dict[str, Any], **options: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """Each sample's result line as it finishes (producer/service/batch.py says what it holds). `samples`: codes,
        or {"code", "tests", "id", "language"}; `tests`: test sets by name (a sample without "tests" is scored on
        "default"); `options`: the batch's (score, mode, extract, time_limit_s, memory_limit_MB, batch_id).
        A connection that drops is re-attached by the batch's id: no result is lost or run twice."""
        batch_id = options.pop("batch_id", None) or f"c-{secrets.token_hex(8)}"
        body = {
            "batch_id": batch_id,
            "tests": tests,
            "samples": [{"code": s} if isinstance(s, str) else s for s in samples],
            "stream": True,
            **options,
        }
        seen: set[int] = set()
        for attempt in range(_RETRIES):
            try:  # the same POST again re-attaches: the batch's id names it
                response = await self._http.send(self._http.build_request("POST", "/v1/batch", json=body), stream=True)
                try:
                    if response.status_code == 429:
                        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                        continue
                    if response.status_code >= 400:
                        await response.aread()
                        _raise_for(response)
                    async for text in response.aiter_lines():
                        if not text:
                            continue
                        line = json.loads(text)
                        if line.get("done"):
                            return
                        if "index" in line and line["index"] not in seen:
                            seen.add(line["index"])
                            yield line
                finally:
                    await response.aclose()
            except (httpx.TransportError, json.JSONDecodeError):  # dropped: re-attach
                await asyncio.sleep(min(2**attempt * 0.25, 5.0))
        raise ServiceError(f"batch {batch_id}: gave up after {_RETRIES} attempts")

    async def score(
        self, samples: Sequence[str | dict[str, Any]], tests: dict[str, Any], **options: Any
    ) -> list[dict[str, Any]]:
        """Every sample's result line, in the samples' order."""
        lines = [line async for line in self.stream(samples, tests, **options)]
        return sorted(lines, key=lambda line: line["index"])


def _raise_for(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise ServiceError(f"{response.status_code} from {response.request.url}: {response.text[:500]}")


async def score_batch(
    codes: Sequence[str],
    ground_truths: Sequence[Any],
    url: str | None = None,
    languages: Sequence[str | None] | None = None,
    **options: Any,
) -> list[float]:
    """The score of each code against its ground truth (verl's and APPS' {"inputs", "outputs", "fn_name"?},
    a dict or its JSON text), in one batch: identical ground truths are one test set, sent once. `languages`:
    each code's (None: Python's)."""
    sets: dict[str, str] = {}
    tests: dict[str, Any] = {}
    samples = []
    languages = languages or [None] * len(codes)
    for code, truth, language in zip(codes, ground_truths, languages, strict=True):
        text = truth if isinstance(truth, str) else json.dumps(truth, sort_keys=True)
        name = sets.setdefault(text, f"t{len(sets)}")
        if name not in tests:
            found = json.loads(text)
            if found.get("assert_case"):
                raise ValueError(
                    "a ground truth of assert_case tests: the batch endpoint scores stdin and call-based tests; "
                    "verl's sandbox_fusion scorer sends these to /run_code, which runs them"
                )
            tests[name] = {key: found[key] for key in ("inputs", "outputs", "fn_name") if found.get(key) is not None}
        samples.append({"code": code, "tests": name, **({"language": language} if language else {})})
    async with ServiceClient(url or os.environ.get(URL_VARIABLE, DEFAULT_URL)) as client:
        lines = await client.score(samples, tests, **options)
    return [line["score"] for line in lines]


def compute_score(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    url: str | None = None,
    **options: Any,
) -> list[float]:
    """verl's batch reward function (BatchRewardManager: reward.custom_reward_function.path = this file's
    path, name = compute_score): verl's continuous score of each solution (the fraction of its first ten
    tests passed), every test judged as verl's sandbox_fusion judge compares (exact, after trailing
    newlines); a solution in another language than Python where its extra_info says so ("language").
    `url`: the service's (else CODEEXEC_SERVE_URL's); `options` go to the batch (score, mode, time_limit_s,
    ...)."""
    languages = [info.get("language") if isinstance(info, dict) else None for info in extra_infos or ()]
    return asyncio.run(score_batch(solution_strs, ground_truths, url, languages or None, **options))


async def trl_reward(completions: Sequence[Any], ground_truth: Sequence[Any], **columns: Any) -> list[float]:
    """A TRL GRPOTrainer reward function (async: TRL awaits its reward functions together): the dataset's
    `ground_truth` column holds each prompt's tests, a `language` column (where there is one) each answer's
    language; a conversational completion's last message is the answer."""
    answers = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return await score_batch(answers, ground_truth, languages=columns.get("language"))
