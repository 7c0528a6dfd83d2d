"""What the terminal shows: the progress of a run and its pass@k tables."""

from __future__ import annotations

import sys
import time

import redis
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from codeexec.producer.results.compare import Comparison
from codeexec.producer.results.report import RunReport
from codeexec.producer.run import Run
from codeexec.protocol.run import priority_name
from codeexec.worker.queue.leases import Worker, workers

# Not a terminal (a log, CI, a pipe): lines as long as they are, never wrapped or cut at 80 columns.
stderr = Console(stderr=True, width=None if sys.stderr.isatty() else 1000)
stdout = Console(width=None if sys.stdout.isatty() else 1000)


def print_status(run: Run) -> None:
    """Where the run's samples are: done, in flight (held by workers), waiting; and the live workers."""
    done, total = run.progress()
    meta = run.refresh()
    flying = min(run.in_flight(), total - done)
    stdout.print(
        f"{meta.run}: {done} / {total} samples done"
        + (" (complete)" if done >= total else " (cancelled)" if meta.status == "cancelled" else "")
        + f"; {flying} in flight, {total - done - flying} {'left' if meta.status == 'cancelled' else 'waiting'}"
        + f"; priority {priority_name(meta.options.priority)}",
        soft_wrap=True,
    )
    if done < total and meta.status != "cancelled" and (alone := run.alone()):
        stdout.print(f"[yellow]{alone}", soft_wrap=True)
    live = [worker for worker in workers(run.client) if worker.alive]
    if live:
        print_workers(run.client, live)


def print_workers(client: redis.Redis, listed: list[Worker]) -> None:
    seconds, microseconds = client.time()
    now = seconds + microseconds / 1e6  # the clock of the workers' heartbeats
    table = Table(title="workers", title_justify="left")
    for column in ("host", "pid", "state", "environments", "run", "samples in hand", "last heartbeat"):
        table.add_column(column)
    for worker in listed:
        state = "alive" if worker.alive else "gone"
        ago = f"{max(0.0, now - worker.last):.0f} s ago"
        served = ", ".join(worker.environments) or "-"
        table.add_row(worker.host, str(worker.pid), state, served, worker.run or "-", str(worker.samples), ago)
    stdout.print(table)


def wait_for(run: Run, show: bool = True, serving: str | None = None) -> None:
    """Block until every sample of the run has a result (Run.wait()), showing a progress bar with rate and
    ETA (`show`), and what the wait says, in yellow."""
    done, total = run.progress()
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
        task = bar.add_task(run.name, total=total, completed=done, rate="")
        started, start_done = time.monotonic(), done

        def on_progress(done: int, total: int) -> None:
            elapsed = time.monotonic() - started
            rate = (done - start_done) / elapsed if elapsed > 0 else 0.0
            bar.update(task, completed=done, rate=f"{rate:,.1f} samples/s")

        run.wait(on_progress, lambda message: stderr.print(f"[yellow]{message}", soft_wrap=True), serving)


def _protections(summary: str) -> str:
    """ "all on", naming them, or the protections that were not (worker/process/protections.py's summary)."""
    states = dict(word.partition("=")[::2] for word in summary.split())
    short = [f"{name} {state}" for name, state in states.items() if state != "on"]
    return f"all on: {', '.join(states)}" if not short else "without " + ", ".join(short)


def print_report(report: RunReport, per_task: bool) -> None:
    table = Table(title=f"run {report.run}", title_justify="left")
    table.add_column("metric")
    table.add_column("value")  # left: a long row (the time limits) leaves short ones readable
    if report.base_pass_at_k is not None:  # HumanEval+, MBPP+: both numbers, as EvalPlus prints them
        for k, value in report.base_pass_at_k.items():
            table.add_row(f"pass@{k} base tests", f"{100 * value:.2f}%")
    plus = " base + plus tests" if report.base_pass_at_k is not None else ""
    for k, value in report.pass_at_k.items():
        low, high = report.pass_at_k_ci95.get(k, (value, value))
        table.add_row(f"pass@{k}{plus}", f"{100 * value:.2f}%  [dim]95% [{100 * low:.2f}, {100 * high:.2f}][/]")
    for k, why in report.left_out.items():
        table.add_row(f"pass@{k}", f"[dim]left out: {why}")
    table.add_row("tasks", str(len(report.tasks)))
    table.add_row("samples done", f"{report.n_done} / {report.n_samples}")
    for outcome, count in report.outcomes.items():  # of samples
        if count:
            table.add_row(f"  samples {outcome}", str(count))
    for tests, limits in report.limits.items():  # named for what they limit where the run has several kinds
        table.add_row("time limit" + (f", {tests}" if len(report.limits) > 1 else ""), limits)
    tests = sum(report.judged.values())
    if tests:
        share = report.judged.get("host-compared", 0) / tests
        # docs/judging.md: the candidate sends the value, the worker compares it (the candidate cannot forge it)
        table.add_row(
            "tests compared by the worker", f"{100 * share:.1f}% of {tests} (the rest in the candidate's process)"
        )
    table.add_row("hash seed", str(report.hash_seed))
    table.add_row("isolation", report.isolation)
    for host, seen in report.protections.items():  # what the candidates ran under (docs/security.md)
        for under, count in seen.items():
            table.add_row(f"sandbox on host {host}", f"{_protections(under)} ({count} samples)")
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
