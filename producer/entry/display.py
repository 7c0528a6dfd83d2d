"""What the terminal shows: the progress of a run and its pass@k tables."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import redis
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from codeexec.producer import runs
from codeexec.producer.local.backend import restarted, unreachable
from codeexec.producer.results.compare import Comparison
from codeexec.producer.results.report import RunReport
from codeexec.producer.submit import enqueue, pending_samples
from codeexec.protocol import keys
from codeexec.protocol.settings import get_settings
from codeexec.worker.queue.leases import Worker, in_flight, workers
from codeexec.worker.queue.schedule import Schedule, priority_name

# Not a terminal (a log, CI, a pipe): lines as long as they are, never wrapped or cut at 80 columns.
stderr = Console(stderr=True, width=None if sys.stderr.isatty() else 1000)
stdout = Console()

#: Progress is polled every _POLL_S, from _FIRST_POLL_S doubling: a run of a few samples on warm
#: workers ends within milliseconds, and should not wait half a second to be told.
_FIRST_POLL_S, _POLL_S = 0.005, 0.5
_STALL_S = 30.0  # no progress and no job anywhere for this long: jobs were lost, send them again
_STALL_AFTER_RESTART_S = 2.0  # the same, once Redis was seen restarted (its last second may be lost)
_ALONE_S = 5.0  # no progress and no live worker for this long: say so
NO_WORKER = (
    "no live worker is taking this run's samples: start one where it reaches this Redis (codeexec worker), "
    "or on the private Valkey, codeexec status RUN --wait"
)


def live_workers(client: redis.Redis, environment: str | None = None) -> list[Worker]:
    """The live workers (that serve `environment`, if one is named)."""
    return [
        worker
        for worker in workers(client)
        if worker.alive and (environment is None or environment in worker.environments)
    ]


def no_worker(environment: str | None) -> str:
    """What to say of a run no live worker takes the samples of."""
    if environment is None:
        return NO_WORKER
    return (
        f"no live worker has the environment {environment!r} this run's candidates need: build it where a worker "
        f"runs (codeexec env build {environment}) and start the worker there, or on the private Valkey, "
        "codeexec status RUN --wait"
    )


def print_status(client: redis.Redis, run: str) -> None:
    """Where the run's samples are: done, in flight (held by workers), waiting; and the live workers."""
    done, total = runs.progress(client, run)
    meta = runs.meta(client, run)
    flying = min(in_flight(client, run), total - done)
    stdout.print(
        f"{run}: {done} / {total} samples done"
        + (" (complete)" if done >= total else " (cancelled)" if meta.status == "cancelled" else "")
        + f"; {flying} in flight, {total - done - flying} {'left' if meta.status == 'cancelled' else 'waiting'}"
        + f"; priority {priority_name(meta.priority)}",
        soft_wrap=True,
    )
    live = live_workers(client)
    serving = [worker for worker in live if meta.environment is None or meta.environment in worker.environments]
    if done < total and not serving and meta.status != "cancelled":
        stdout.print(f"[yellow]{no_worker(meta.environment)}", soft_wrap=True)
    if live:
        print_workers(client, live)


def print_workers(client: redis.Redis, listed: list[Worker]) -> None:
    now = float(client.time()[0])
    table = Table(title="workers", title_justify="left")
    for column in ("host", "pid", "state", "environments", "run", "samples in hand", "last heartbeat"):
        table.add_column(column)
    for worker in listed:
        state = "alive" if worker.alive else "gone"
        ago = f"{now - worker.last:.0f} s ago"
        served = ", ".join(worker.environments) or "-"
        table.add_row(worker.host, str(worker.pid), state, served, worker.run or "-", str(worker.samples), ago)
    stdout.print(table)


def wait_for(
    client: redis.Redis,
    run: str,
    show: bool = True,
    on_progress: Callable[[int, int], object] | None = None,
    serving: str | None = None,
) -> None:
    """Block until every sample of the run has a result, showing a progress bar with rate and ETA
    (`show`), and telling `on_progress` (done, total) as it moves.

    If the run stops moving while no job is queued or held by a worker (a Redis that lost its last
    second of writes can lose jobs), the samples still pending are enqueued again; the record script
    makes any duplicate harmless. A Redis that was restarted meanwhile (the private Valkey, started again
    by whoever keeps it: producer/local/valkey.py) is said in one line, and looked at for such samples at once:
    restarted since `serving` (server_id() before the run was submitted), else since the wait began.
    If Redis cannot be reached for longer than the client retries, the error says how to carry on.
    """
    try:
        _wait(client, run, show, on_progress, server_id(client) if serving is None else serving)
    except redis.ConnectionError as exc:
        raise redis.ConnectionError(unreachable(client, run, exc)) from None


def _wait(
    client: redis.Redis, run: str, show: bool, on_progress: Callable[[int, int], object] | None, server: str
) -> None:
    done, total = runs.progress(client, run)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=stderr, disable=not show, transient=False) as bar:
        task = bar.add_task(run, total=total, completed=done, rate="")
        started, start_done = time.monotonic(), done
        last_change, last_done = time.monotonic(), done
        warned_alone = False
        stall_s = _STALL_S
        pause = _FIRST_POLL_S
        if done >= total:  # done before it was first looked at: said once
            if on_progress is not None:
                on_progress(done, total)
            _serving(client, server)
        while done < total:
            time.sleep(pause)
            pause = min(2 * pause, _POLL_S)
            done, total = runs.progress(client, run)
            if (now_serving := _serving(client, server)) != server:
                server = now_serving
                stall_s = _STALL_AFTER_RESTART_S  # what its last second lost is sent again soon
            if on_progress is not None and done != last_done:
                on_progress(done, total)
            elapsed = time.monotonic() - started
            rate = (done - start_done) / elapsed if elapsed > 0 else 0.0
            bar.update(task, completed=done, rate=f"{rate:,.1f} samples/s")
            if done != last_done:
                last_change, last_done = time.monotonic(), done
            elif time.monotonic() - last_change > _ALONE_S and not warned_alone and (alone := _alone(client, run)):
                stderr.print(f"[yellow]{alone}", soft_wrap=True)
                warned_alone = True
            elif time.monotonic() - last_change > stall_s:
                _repair(client, run)
                last_change = time.monotonic()
            if done < total and runs.meta(client, run).status == "cancelled":
                stderr.print(
                    f"run {run} was cancelled with {done} of {total} samples done (codeexec resume carries on)"
                )
                return


def _serving(client: redis.Redis, server: str) -> str:
    """The server's id now; said in a line where it is not `server`'s (it was started again since)."""
    now = server_id(client)
    if now != server:
        stderr.print(f"[yellow]{restarted(client)}; the run goes on, nothing is lost")
    return now


def server_id(client: redis.Redis) -> str:
    """The server's run id: a new one each time it starts ("" where INFO is refused, as an ACL may)."""
    try:
        return str(client.info("server").get("run_id", ""))
    except redis.ResponseError:
        return ""


def _alone(client: redis.Redis, run: str) -> str | None:
    """What to say if no live worker takes the run's samples (none that serves its environment); None if one does."""
    environment = runs.meta(client, run).environment
    return None if live_workers(client, environment) else no_worker(environment)


def _repair(client: redis.Redis, run: str) -> None:
    """The run has not moved for _STALL_S. If nothing of it waits, nothing wakes a worker (no Celery
    message queued) and no worker holds a job of it, its pending samples have no job left (a Redis that
    lost its last second of writes): send them again. The record script makes any duplicate harmless.
    (Jobs that wait with no Celery message are the workers' to wake: worker/queue/leases.py's Heart.wake.)"""
    meta = runs.meta(client, run)
    waiting = Schedule(client, meta.environment).waiting(run)
    if meta.status != "queued" or client.llen(keys.queue(meta.environment)) or in_flight(client, run) or waiting:
        return  # its producer is still storing or sending, or something is on its way
    lost = pending_samples(client, run)
    if lost:
        stderr.print(f"[yellow]no job left for {len(lost)} pending sample(s): enqueued them again")
        enqueue(client, meta, lost, get_settings().batch_size)


def _protections(summary: str) -> str:
    """ "all on", or the protections that were not (worker/process/protections.py's summary)."""
    states = dict(word.partition("=")[::2] for word in summary.split())
    short = [f"{name} {state}" for name, state in states.items() if state != "on"]
    return "all on" if not short else "without " + ", ".join(short)


def print_report(report: RunReport, per_task: bool) -> None:
    table = Table(title=f"run {report.run}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    if report.base_pass_at_k is not None:  # HumanEval+, MBPP+: both numbers, as EvalPlus prints them
        for k, value in report.base_pass_at_k.items():
            table.add_row(f"pass@{k} base tests", f"{100 * value:.2f}%")
    plus = " base + plus tests" if report.base_pass_at_k is not None else ""
    for k, value in report.pass_at_k.items():
        low, high = report.pass_at_k_ci95.get(k, (value, value))
        table.add_row(f"pass@{k}{plus}", f"{100 * value:.2f}%  [dim]95% [{100 * low:.2f}, {100 * high:.2f}][/]")
    for k, why in report.left_out.items():
        table.add_row(f"pass@{k}", f"[dim]left out: {why}")
    table.add_row("samples", f"{report.n_done} / {report.n_samples}")
    table.add_row("tasks", str(len(report.tasks)))
    for outcome, count in report.outcomes.items():
        if count:
            table.add_row(f"  {outcome}", str(count))
    if report.case_limits is not None:
        table.add_row("tests", report.case_limits)
    if report.suite_limits is not None:
        table.add_row("test files", report.suite_limits)
    if report.evalplus_limits is not None:
        least, factor = report.evalplus_limits
        table.add_row("time limit", f"per call max({least:g} s, {factor:g} x the canonical solution's)")
    elif report.assertion_tests:  # named for what it limits where another row gives the others' limits
        others = report.case_limits is not None or report.suite_limits is not None
        table.add_row("time limit" + (", assertions" if others else ""), f"{report.timeout_s:g} s a sample")
    tests = sum(report.judged.values())
    if tests:
        share = report.judged.get("host-compared", 0) / tests
        table.add_row("judged in the host", f"{100 * share:.1f}% of {tests} tests (the rest in-process)")
    table.add_row("hash seed", str(report.hash_seed))
    table.add_row("isolation", report.isolation)
    for host, seen in report.protections.items():
        for under, count in seen.items():
            table.add_row(f"protections on {host}", f"{_protections(under)} ({count} samples)")
    stdout.print(table)
    for note in report.notes:
        stdout.print(f"[yellow]note:[/] {note}")
    if per_task:
        tasks = Table(title="per task", title_justify="left")
        for column in ("task", "n", "c", *(f"pass@{k}" for k in report.pass_at_k)):
            tasks.add_column(column, justify="left" if column == "task" else "right")
        for task_id, task in report.tasks.items():
            tasks.add_row(
                task_id,
                str(task.n),
                str(task.c),
                *(f"{100 * task.pass_at_k.get(k, 0.0):.1f}%" for k in report.pass_at_k),
            )
        stdout.print(tasks)


def print_comparison(comparison: Comparison) -> None:
    table = Table(title=f"{comparison.b} against {comparison.a}", title_justify="left")
    for column in ("", "A", "B", "B - A", "95% interval"):
        table.add_column(column, justify="right")
    for k, figures in comparison.pass_at_k.items():
        low, high = figures.ci95
        table.add_row(
            f"pass@{k}",
            f"{100 * figures.a:.2f}%",
            f"{100 * figures.b:.2f}%",
            f"{100 * figures.diff:+.2f}",
            f"[{100 * low:+.2f}, {100 * high:+.2f}]",
        )
    for k, why in comparison.left_out.items():
        table.add_row(f"pass@{k}", f"[dim]left out: {why}", "", "", "")
    stdout.print(table)
    stdout.print(f"{comparison.tasks_compared} tasks in both runs; the interval: a paired bootstrap over them")
    for name, tasks in (
        ("gained", comparison.gained),
        ("lost", comparison.lost),
        (f"only in {comparison.a}", comparison.only_in_a),
        (f"only in {comparison.b}", comparison.only_in_b),
    ):
        stdout.print(f"{name} ({len(tasks)}): {', '.join(tasks) or '-'}", soft_wrap=True)
