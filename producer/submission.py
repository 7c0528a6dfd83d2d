"""A run before it is stored: its problems and samples read and checked whole, and its record (RunMeta) made,
before anything is written to Redis (producer/run.py stores it). InputError names the file and line of
anything wrong, so that a bad input enqueues nothing."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from codeexec.producer.inputs import completions
from codeexec.producer.inputs.files import InputError, write_whole
from codeexec.producer.inputs.problems import (
    CANONICAL,
    PROBLEM_SETS,
    load_problems,
    problems_path,
    write_canonical_samples,
)
from codeexec.producer.inputs.samples import SampleSet, read_samples
from codeexec.protocol.models import Problem
from codeexec.protocol.run import RunMeta, RunOptions
from codeexec.protocol.settings import RUN_SETTINGS, Settings, get_settings
from codeexec.worker import environments
from codeexec.worker.judging.kinds import kind_of

Records = Iterable[Mapping[str, Any]]

_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Submission(NamedTuple):
    """A run ready to be stored: the problems of its samples' tasks, its samples, and its record."""

    problems: dict[str, Problem]
    samples: SampleSet
    meta: RunMeta


def options(given: Mapping[str, Any], say: Callable[[str], str] = lambda name: name) -> RunOptions:
    """RunOptions of `given` (the Python API's keyword arguments, the command line's flags); InputError naming
    the option (`say(name)`: how the entry point calls it) and what it expected, for one that is wrong."""
    try:
        return RunOptions.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] == "extra_forbidden":
            known = ", ".join(RunOptions.model_fields)
            raise InputError(f"{say(name)}: not an option of a run (they are {known})") from None
        value = given.get(name)
        shown = f" {value!r}" if value is not None else ""
        raise InputError(f"{say(name)}{shown}: {error['msg']}") from None


def prepare(
    problems: str | Path | Records,
    samples: str | Path | Records,
    options: RunOptions | None = None,
    run: str | None = None,
    warn: Callable[[str], object] = lambda message: None,
) -> Submission:
    """Read and check every input of a run before anything is written to Redis. Problems and samples given as
    dicts are written to files in the data directory first: a run's samples file is its record (the
    per-sample output and `resume` read it again). `run`: its name (default: from the samples file's and the
    time); `warn`: told what is left out or will be an error."""
    settings = get_settings()
    options = options or RunOptions()
    if run:
        check_run_name(run)
    given = {}  # the files written of objects, by what their errors call them
    if not isinstance(problems, (str, Path)):
        problems = given["problems"] = _saved(settings.data_dir / "problems", problems, "problems")
    if not isinstance(samples, (str, Path)):
        samples = given["samples"] = _saved(settings.data_dir / "samples", samples, "samples")
    try:
        found = load_problems(str(problems), options.split, options.challenge)
        if str(samples) == CANONICAL:
            samples = write_canonical_samples(str(problems), settings.data_dir / "samples", found)
        sample_set = read_samples(Path(samples), found, options.skip_unknown, options.treat_as)
    except InputError as exc:
        message = str(exc)
        for what, path in given.items():
            message = message.replace(f"{path}:", f"{what} given as objects, record ")
        raise InputError(message) from None
    name = run or new_run_id("run" if "samples" in given else Path(samples).name.split(".")[0])
    options = options.model_copy(update={"environment": needed_environment(found, sample_set, options, settings)})
    if sample_set.skipped_unknown:
        warn(f"left out {sample_set.skipped_unknown} sample(s) with an unknown task_id")
    if options.strict_verdicts:
        refused = [task for task in sample_set.per_task if kind_of(found[task].tests).in_process(found[task].tests)]
        if refused:
            listed = ", ".join(refused[:10]) + (" ..." if len(refused) > 10 else "")
            warn(
                f"--strict-verdicts: the samples of {len(refused)} task(s) will be errors, as their tests include "
                f"one the host cannot compare: {listed}"
            )
    return Submission(found, sample_set, new_meta(name, str(problems), sample_set, found, options))


def new_meta(run: str, problems: str, samples: SampleSet, found: Mapping[str, Problem], options: RunOptions) -> RunMeta:
    """The record of a run about to be submitted: `problems`, a problem set's name or a file's path; `found`,
    its problems (the samples' tasks' among them). Its options' defaults are filled in from the settings."""
    settings = get_settings()
    tasks = [found[task_id] for task_id in samples.per_task]
    filled = {
        "timeout_s": options.timeout_s if options.timeout_s is not None else settings.timeout_s,
        "hash_seed": options.hash_seed if options.hash_seed is not None else settings.hash_seed,
        "isolation": options.isolation or settings.isolation,
    }
    return RunMeta(
        run=run,
        created=time.time(),
        options=options.model_copy(update=filled),
        problems=problems if problems in PROBLEM_SETS else str(Path(problems).resolve()),
        problems_sha256=_sha256(problems_path(problems)),
        samples_path=str(samples.path.resolve()),
        samples_sha256=samples.sha256,
        n_samples=len(samples.lines),
        n_tasks=len(samples.per_task),
        kinds=sorted({problem.tests.kind for problem in tasks}),
        relaxed=any(problem.tests.needs_relaxed() for problem in tasks),
        runner=settings.model_dump(mode="json", include=RUN_SETTINGS),
        settings={"batch_size": settings.batch_size, "max_attempts": settings.max_attempts},
        version=version(),
    )


def needed_environment(
    problems: dict[str, Problem], samples: SampleSet, options: RunOptions, settings: Settings
) -> str | None:
    """The environment a run's candidates run in (worker/environments.py): the one asked for ("none": the
    workers' own Python), else the one its problem set needs. On the embedded default, where this machine's
    workers are the only ones, it must be built here."""
    if options.environment is not None:
        wanted = None if options.environment == "none" else options.environment
    else:
        needs = {problems[task].tests.needs_environment() for task in samples.per_task}
        needs.discard(None)
        if len(needs) > 1:
            raise InputError(f"the problems need different environments ({', '.join(sorted(needs))}): run them apart")
        wanted = needs.pop() if needs else None
    if wanted is not None and settings.redis_url is None and environments.load(settings.data_dir, wanted) is None:
        raise InputError(
            f"these candidates run in the environment {wanted!r}, which is not built here: codeexec env build {wanted} "
            "(or --environment none, to run them in the workers' own Python)"
        )
    return wanted


def new_run_id(stem: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:60] or "run"
    return f"{clean}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def check_run_name(run: str) -> None:
    if not _RUN_NAME.fullmatch(run):
        raise InputError(f"run name {run!r}: use letters, digits, '.', '_' and '-' (at most 128, no leading symbol)")


def version() -> str:
    """codeexec's version, as installed."""
    try:
        return importlib.metadata.version("codeexec")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _sha256(path: Path) -> str:
    """sha256 of a file; of a directory of MultiPL-E's completions files, of their digests in order."""
    digest = hashlib.sha256()  # (hashlib.file_digest is 3.11's)
    if path.is_dir():
        for _ in completions.records(path, digest):
            pass
        return digest.hexdigest()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _saved(directory: Path, records: Records, what: str) -> Path:
    """Records (`what`: problems or samples) as a JSON-lines file in `directory`, named after its
    content (a run's samples file is part of its record: it is never written over)."""
    lines = []
    for number, record in enumerate(records, start=1):
        try:
            lines.append(json.dumps(dict(record), ensure_ascii=False) + "\n")
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what} given as objects, record {number}: cannot be written as JSON: {exc}") from None
    text = "".join(lines)
    return write_whole(directory / f"{hashlib.sha256(text.encode()).hexdigest()[:20]}.jsonl", text)
