"""Every Redis key codeexec writes, in one place.

All keys of a run carry the run id in braces, a Redis Cluster hash tag, so that a run lives in one
slot and the result write can touch all of them in one Lua script.

    codeexec:runs                       zset   run id -> creation time (unix seconds)
    codeexec:{run}:meta                 string RunMeta as JSON
    codeexec:{run}:problems             hash   task_id -> Problem as JSON (stored once per run)
    codeexec:{run}:expected             hash   task_id -> samples submitted for the task
    codeexec:{run}:pending:{task_id}    hash   sample index -> Sample as JSON, until it has a result
    codeexec:{run}:results:{task_id}    hash   sample index -> StoredResult as JSON (first write wins)
    codeexec:{run}:attempts:{task_id}   hash   sample index -> deliveries so far
    codeexec:{run}:n                    hash   task_id -> samples with a result that counts (not infra_error)
    codeexec:{run}:c                    hash   task_id -> samples that passed
    codeexec:{run}:c_base               hash   task_id -> samples whose EvalPlus base check passed (HumanEval+)
    codeexec:{run}:truth                hash   task_id -> the canonical solution's outputs and times, as
                                               worker/judging/kinds/evalplus.py's Truth JSON (first write wins)
    codeexec:{run}:stats                hash   "done" -> results recorded; "outcome:<exit code>" -> count;
                                               "protections:<host> <summary>" -> results of candidates run
                                               under those protections on that host (worker/process/protections.py);
                                               "judged:host-compared", "judged:in-process" -> tests judged so;
                                               "worker:<host> <pid>" -> results that worker process recorded;
                                               "first", "last" -> when the first and the latest result were
                                               recorded (Redis's clock, unix seconds)
    codeexec:{run}:notes                set    what workers found worth saying about the run (a wall-clock limit)
    codeexec:{run}:done                 channel "task_id<TAB>index" of each result as it is recorded, published
                                               only for a run whose meta says so (RunMeta.notify: the HTTP
                                               service's, whose requests wait for their results)
    codeexec:{run}:requests             zset   the service's tasks (a request, a batch's test set) -> when they
                                               may be forgotten, with their keys (unix seconds)
    codeexec:{run}:batch:{id}           string a batch of the service (producer/service/dispatch.py's Batch), as JSON

HumanEval+ truths outlive their runs, for later runs of the same tests (worker/judging/kinds/evalplus.py):

    codeexec:truths                     hash   truth_key() -> Truth JSON

The workers, the jobs waiting for them (worker/queue/schedule.py) and the jobs they hold (worker/queue/leases.py)
share the hash tag {workers}, so that a heartbeat touches them all in one script, and taking a job
takes out its lease in the same script:

    codeexec:{workers}:all              zset   worker id -> its last heartbeat (Redis server time)
    codeexec:{workers}:worker:{id}      hash   Worker as fields: host, pid, started, run, samples, last
    codeexec:{workers}:leases           zset   lease id -> when it expires unless renewed
    codeexec:{workers}:lease:{id}       string Lease as JSON: the job and the worker holding it
    codeexec:{workers}:active           zset   run id -> its priority, for each run with jobs waiting
    codeexec:{workers}:served           hash   run id -> samples handed out while it was active
    codeexec:{workers}:jobs:{run}       list   Job as JSON: the run's jobs waiting for a worker
    codeexec:{workers}:waker            string the worker id that may send ticks for jobs with none, for
                                               one heartbeat (worker/queue/leases.py's Heart.wake)

Runs whose candidates need an environment (worker/environments.py) wait apart, so that only workers
that have it take their jobs: `active`, `served` and `waker` get the environment's name after them
(codeexec:{workers}:active:bigcodebench), and their ticks go to a Celery queue of its own (queue()).

The Celery broker's own keys (the queue lists named QUEUE and queue(), whose messages are ticks: one per
job waiting, carrying none; kombu's "unacked" hash and "unacked_index" zset) are kombu's.
"""

from __future__ import annotations

PREFIX = "codeexec"
QUEUE = "codeexec"  # the Celery queue jobs go to
RUNS = f"{PREFIX}:runs"
TRUTHS = f"{PREFIX}:truths"
DONE = "done"  # field of the stats hash
PROTECTIONS = "protections:"  # how the stats hash's protections fields begin
JUDGED_HOST, JUDGED_IN_PROCESS = "judged:host-compared", "judged:in-process"  # fields of the stats hash
WORKER = "worker:"  # how the stats hash's worker fields begin
FIRST_RESULT, LAST_RESULT = "first", "last"  # fields of the stats hash
_WORKERS = f"{PREFIX}:{{workers}}"
WORKERS = f"{_WORKERS}:all"
LEASES = f"{_WORKERS}:leases"
ACTIVE = f"{_WORKERS}:active"
SERVED = f"{_WORKERS}:served"
WAKER = f"{_WORKERS}:waker"


def queue(environment: str | None) -> str:
    """The Celery queue of the ticks of runs in `environment` (None: the worker's own Python)."""
    return QUEUE if environment is None else f"{QUEUE}.env.{environment}"


def active(environment: str | None) -> str:
    return ACTIVE if environment is None else f"{ACTIVE}:{environment}"


def served(environment: str | None) -> str:
    return SERVED if environment is None else f"{SERVED}:{environment}"


def waker(environment: str | None) -> str:
    return WAKER if environment is None else f"{WAKER}:{environment}"


def _run(run: str) -> str:
    return f"{PREFIX}:{{{run}}}"


def meta(run: str) -> str:
    return f"{_run(run)}:meta"


def problems(run: str) -> str:
    return f"{_run(run)}:problems"


def expected(run: str) -> str:
    return f"{_run(run)}:expected"


def pending(run: str, task_id: str) -> str:
    return f"{_run(run)}:pending:{task_id}"


def results(run: str, task_id: str) -> str:
    return f"{_run(run)}:results:{task_id}"


def attempts(run: str, task_id: str) -> str:
    return f"{_run(run)}:attempts:{task_id}"


def n(run: str) -> str:
    return f"{_run(run)}:n"


def c(run: str) -> str:
    return f"{_run(run)}:c"


def c_base(run: str) -> str:
    return f"{_run(run)}:c_base"


def truth(run: str) -> str:
    return f"{_run(run)}:truth"


def stats(run: str) -> str:
    return f"{_run(run)}:stats"


def outcome_field(exit_code: str) -> str:
    return f"outcome:{exit_code}"


def protections_field(host: str, summary: str) -> str:
    return f"{PROTECTIONS}{host} {summary}"


def worker_field(host: str, pid: int) -> str:
    return f"{WORKER}{host} {pid}"


def notes(run: str) -> str:
    return f"{_run(run)}:notes"


def done(run: str) -> str:
    return f"{_run(run)}:done"


def requests(run: str) -> str:
    return f"{_run(run)}:requests"


def batch(run: str, batch_id: str) -> str:
    return f"{_run(run)}:batch:{batch_id}"


def worker(worker_id: str) -> str:
    return f"{_WORKERS}:worker:{worker_id}"


def lease(lease_id: str) -> str:
    return f"{_WORKERS}:lease:{lease_id}"


def jobs(run: str) -> str:
    return f"{_WORKERS}:jobs:{run}"
