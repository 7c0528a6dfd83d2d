"""Every setting codeexec reads, in one place.

Each field can be set from the environment as ``CODEEXEC_<FIELD>`` (for example
``CODEEXEC_REDIS_URL``); command-line flags override the environment.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: Modules a candidate may not import by name (nor any submodule of them). A backstop against the
#: obvious ways generated code reaches the network, other processes or the file tree; the sandbox
#: (worker/candidate/sandbox.py) is what the kernel enforces. Extend it with ``CODEEXEC_DENY_EXTRA``.
DENIED_MODULES: frozenset[str] = frozenset(
    {
        "subprocess",
        "socket",
        "_socket",
        "requests",
        "urllib",
        "ctypes",
        "_ctypes",
        "shutil",
        "http.client",
        "asyncio.subprocess",
    }
)

MIN_TIMEOUT_S = 0.1
MAX_TIMEOUT_S = 30.0
#: The longest --timeout of a test file's sample (BigCodeBench gives 240 s).
MAX_SUITE_TIMEOUT_S = 3600.0


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "codeexec"


class RunnerConfig(BaseModel):
    """How one candidate is run. Defaults come from Settings; run_candidate(**limits) overrides them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interpreter: str = Field(sys.executable, description="Python that runs candidates (always with -s).")
    interpreter_flags: list[str] = Field(default_factory=list, description="Extra flags after -s.")
    deny_extra: list[str] = Field(default_factory=list, description="Modules denied on top of DENIED_MODULES.")
    deny_imports: bool = Field(
        True,
        description="Apply the import denylist (DENIED_MODULES and deny_extra); problem sets whose tasks need "
        "subprocess, sockets or shutil (BigCodeBench) turn it off, and the kernel's sandbox carries the load.",
    )
    memory_bytes: int | None = Field(
        4 << 30,
        gt=0,
        description="RLIMIT_AS of a candidate: address space beyond what a fork starts with (its zygote's, "
        "preloaded modules and all), or a fresh interpreter's in all; None: no limit.",
    )
    data_bytes: int | None = Field(None, gt=0, description="RLIMIT_DATA of a candidate, counted as memory_bytes is.")
    stack_bytes: int | None = Field(None, gt=0, description="RLIMIT_STACK of a candidate; None: the worker's own.")
    file_size_bytes: int | None = Field(64 << 20, ge=0, description="RLIMIT_FSIZE: largest file it writes.")
    open_files: int | None = Field(1024, gt=3, description="RLIMIT_NOFILE of a candidate.")
    core_bytes: int = Field(0, ge=0, description="RLIMIT_CORE: 0, no core dumps.")
    output_bytes: int = Field(256 << 10, gt=0, description="stdout a candidate may write before it is killed.")
    stderr_bytes: int = Field(1 << 20, gt=0, description="stderr a candidate may write before it is killed.")
    startup_timeout_s: float = Field(
        30.0, gt=0, description="How long the interpreter may take to start before the run is an infra_error."
    )
    wall_ceiling_factor: float = Field(
        10.0,
        ge=1.0,
        description="A candidate is stopped after this many times its limit in wall-clock time, however little "
        "of it it could run (a wedged machine); the limit itself counts time it could have run "
        "(worker/process/timelimit.py).",
    )
    preload: list[str] = Field(
        default_factory=list,
        description="Modules a warm interpreter (isolation fork) imports before its first fork, so that its "
        "candidates find them loaded; the judges of problem sets with a prelude add theirs.",
    )
    hash_seed: int = Field(
        0, ge=0, le=4294967295, description="PYTHONHASHSEED of every candidate: the same verdicts run after run."
    )
    isolation: Literal["fork", "fresh"] = Field(
        "fork",
        description="How each candidate's process starts: forked from a warm interpreter "
        "(fork: worker/process/zygote.py) "
        "or as a fresh interpreter (fresh). Either way it is a process of its own, with the same limits.",
    )
    pid_namespace: Literal["auto", "require", "off"] = Field(
        "auto",
        description="Run each candidate in a PID namespace of its own, so that nothing it starts outlives it: "
        "where the kernel allows (auto; a refusal is logged), always (require: a refusal is an infra_error), "
        "or never (off).",
    )
    sandbox: Literal["auto", "require", "off"] = Field(
        "auto",
        description="The kernel-enforced sandbox of every candidate (worker/candidate/sandbox.py: no network, "
        "Landlock, "
        "seccomp): each protection the kernel allows (auto; a refusal is logged and reported), all of them (require: "
        "a worker does not start without them, a candidate does not run), or none (off).",
    )

    variables: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables of every candidate besides codeexec's own (an environment's: "
        "worker/environments.py).",
    )
    posture: Literal["strict", "relaxed", "programs"] = Field(
        "strict",
        description="The sandbox's posture (worker/candidate/sandbox.py): strict, or relaxed for problem sets "
        "whose tasks run system programs and use a loopback network (BigCodeBench): the system's own programs "
        "may be executed, and the candidate's network namespace has its loopback up; or programs, which the "
        "judge of programs in other languages sets (worker/judging/kinds/program.py): programs may be executed, "
        "the toolchains' too, and the network is the strict posture's. docs/security.md.",
    )
    toolchains: list[str] = Field(
        default_factory=list,
        description="Directories the programs posture lets a candidate read and execute beyond the system's "
        "program directories: what the languages' toolchains need (worker/languages/), which the judge sets.",
    )

    @property
    def denied_modules(self) -> frozenset[str]:
        return DENIED_MODULES | frozenset(self.deny_extra) if self.deny_imports else frozenset()


class Settings(BaseSettings, RunnerConfig):
    model_config = SettingsConfigDict(env_prefix="CODEEXEC_", extra="ignore", frozen=True)

    timeout_s: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="The run's time limit of a test where the command gives none (--timeout); unset: each kind's "
        "default (docs/time-limits.md). Time it could run (worker/process/timelimit.py).",
    )

    # -- the distributed path ------------------------------------------------------------------
    redis_url: str | None = Field(None, description="Shared Redis/Valkey; unset: the private Valkey in data_dir.")
    data_dir: Path = Field(default_factory=_default_data_dir, description="Where the private Valkey keeps data.")
    workers: int | None = Field(None, ge=0, description="Local worker processes to start (default: one per core).")
    keep_warm_s: float = Field(
        300.0,
        ge=0,
        description="How long the private Valkey and the local workers stay up after the last command that used "
        "them, for the next one to start at once (producer/local/resident.py); 0: they stop with each command.",
    )
    batch_size: int = Field(16, ge=1, description="Most samples in one job (what a worker takes at a time).")
    environments: list[str] | None = Field(
        None,
        description="The environments a worker serves (worker/environments.py); unset: every one built in "
        "data_dir. Only workers that serve a run's environment take its jobs.",
    )
    max_attempts: int = Field(
        3, ge=1, description="Deliveries of a sample, or runs after infra_error, before giving up."
    )
    visibility_timeout_s: float | None = Field(
        None, gt=0, description="Seconds before an unacknowledged job goes to another worker (default: see below)."
    )

    # -- the HTTP service (codeexec serve: producer/service/endpoints.py) ---------------------------------
    serve_host: str = Field("127.0.0.1", description="Where the service listens: loopback unless told otherwise.")
    serve_port: int = Field(8080, ge=0, le=65535, description="Its port (SandboxFusion's).")
    serve_token: str | None = Field(
        None,
        min_length=16,
        description="The bearer token every request must carry (Authorization: Bearer, or a /t/<token>/ path "
        "prefix for clients that send no header); required where the service listens beyond loopback.",
    )
    serve_max_body_bytes: int = Field(32 << 20, gt=0, description="The largest request body it reads (else 413).")
    serve_max_queued: int = Field(
        2048,
        ge=1,
        description="Jobs of the service waiting for a worker beyond which a new request is turned away at once "
        "(504 for /run_code, the one status verl retries; 429 for a batch; both with Retry-After), rather "
        "than held until its client gives up.",
    )
    serve_run: str = Field(
        "serve",
        description="The run the service's requests are jobs of: servers with the same name share it, and it "
        "shares the workers with other runs by the fair-share rule (worker/queue/schedule.py).",
    )
    serve_keep_s: float = Field(
        3600.0, gt=0, description="How long a request's or a batch's results are kept for its client to collect."
    )

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, data_dir: Path) -> Path:
        # Absolute: the processes started in it (the private Valkey, local workers) run there, not in
        # the user's directory, whose own modules (a worker.py, a celery.py) they must never import.
        return data_dir.expanduser().resolve()

    @property
    def effective_redis_url(self) -> str:
        return self.redis_url or f"unix://{embedded_socket(self.data_dir)}"

    @property
    def effective_visibility_timeout_s(self) -> float:
        """Longer than the longest job can run: a full batch of candidates that all start slowly and run up to
        the wall-clock ceiling."""
        if self.visibility_timeout_s is not None:
            return self.visibility_timeout_s
        return self.batch_size * (MAX_TIMEOUT_S * self.wall_ceiling_factor + self.startup_timeout_s) + 60


def embedded_socket(data_dir: Path) -> Path:
    """The private Valkey's unix socket: in data_dir, unless that path is too long for a socket."""
    path = data_dir.expanduser().resolve() / "valkey.sock"
    if len(str(path)) < 100:  # sun_path holds 108 bytes
        return path
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"codeexec-{os.getuid()}-{digest}.sock"


#: How a run's candidates are limited, as the command that submits the run is set (RunMeta.runner): they
#: apply on whichever worker runs them, so that a command's CODEEXEC_MEMORY_BYTES, say, holds for its run.
RUN_SETTINGS = frozenset(
    {
        "deny_extra",
        "deny_imports",
        "memory_bytes",
        "data_bytes",
        "stack_bytes",
        "file_size_bytes",
        "open_files",
        "core_bytes",
        "output_bytes",
        "stderr_bytes",
        "wall_ceiling_factor",
    }
)
#: The worker's own: what its host allows and holds (the sandbox, the interpreter and what it preloads, the
#: environments built there), which a run cannot change. The private Valkey's warm workers are replaced
#: when a command's differ (producer/local/resident.py).
WORKER_SETTINGS = frozenset(
    {
        "interpreter",
        "interpreter_flags",
        "sandbox",
        "pid_namespace",
        "posture",
        "toolchains",
        "preload",
        "variables",
        "startup_timeout_s",
        "max_attempts",
        "environments",
    }
)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def runner_config(**overrides: object) -> RunnerConfig:
    """The settings' RunnerConfig with overrides applied; TypeError names an unknown one."""
    unknown = sorted(overrides.keys() - RunnerConfig.model_fields.keys())
    if unknown:
        raise TypeError(f"unknown runner limit(s) {unknown}; known: {sorted(RunnerConfig.model_fields)}")
    base = get_settings().model_dump(include=set(RunnerConfig.model_fields))
    return RunnerConfig.model_validate(base | overrides)


def with_preload(options: dict[str, object], modules: list[str]) -> dict[str, object]:
    """`options` (RunnerConfig fields) whose preload is the one they give, then `modules` not in it yet."""
    preload = runner_config(**options).preload
    return options | {"preload": [*preload, *(name for name in modules if name not in preload)]}
