"""The ``codeexec`` command line.

Flags override ``CODEEXEC_*`` environment variables: they are written into the environment before
the settings are read, so the workers a command starts see them too.

The terminal display (codeexec.producer.entry.display, and with it rich) is imported by the commands that use it,
once their samples are submitted: the first sample need not wait for it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import redis

from codeexec.producer.entry import doctor, flags
from codeexec.producer.entry.api import Codeexec, compare_runs, comparison_html
from codeexec.producer.inputs.files import InputError
from codeexec.producer.local import resident, venvs
from codeexec.producer.local.backend import backend
from codeexec.producer.local.lifetime import Stopped, stop_on_sigterm
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.producer.local.workers import WORKER_FLAGS, queues
from codeexec.producer.results.files import RESULTS_FILES, fit
from codeexec.producer.results.persample import write_per_sample
from codeexec.producer.run import Run, server_id
from codeexec.producer.service import command as serve
from codeexec.producer.submission import Submission, prepare, version
from codeexec.protocol.run import priority_name
from codeexec.protocol.settings import get_settings
from codeexec.worker import environments
from codeexec.worker.queue import leases


def build_parser() -> argparse.ArgumentParser:
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--redis-url", help="shared Redis/Valkey (env CODEEXEC_REDIS_URL); default: private Valkey")
    shared.add_argument("--data-dir", help="where the private Valkey keeps its data (env CODEEXEC_DATA_DIR)")

    inputs = argparse.ArgumentParser(add_help=False)
    inputs.add_argument(
        "--problems",
        required=True,
        help="'humaneval', 'humanevalplus' or 'mbppplus' (EvalPlus's HumanEval+, MBPP+), 'bigcodebench', "
        "'bigcodebench-hard', another language's set ('multipl-e-humaneval-cpp', 'mbjsp', 'humaneval-x-java': "
        "docs/languages.md) or a problems file",
    )
    inputs.add_argument(
        "--samples", required=True, type=Path, help="samples file (one JSON object a line), or 'canonical'"
    )
    inputs.add_argument("--run", help="name of the run (default: from the samples file name and the time)")
    flags.add_run_options(inputs)

    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    output.add_argument("--per-sample", type=Path, metavar="OUT.jsonl", help="write one JSON line per sample")
    output.add_argument("--per-task", action="store_true", help="also show n, c and pass@k for each task")
    output.add_argument("--html", type=Path, metavar="OUT.html", help="also write the run's report as one HTML page")
    for results_file in RESULTS_FILES.values():
        output.add_argument(results_file.flag, type=Path, metavar=results_file.metavar, help=results_file.help)

    workers = argparse.ArgumentParser(add_help=False)
    workers.add_argument("--workers", type=int, help="local worker processes (default: cores without --redis-url)")

    parser = argparse.ArgumentParser(
        prog="codeexec", description="Queue-backed distributed evaluator for code generation."
    )
    parser.add_argument("--version", action="version", version=f"codeexec {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("eval", parents=[shared, inputs, output, workers], help="submit, run, wait and report")
    sub.add_parser("submit", parents=[shared, inputs], help="submit a run and print its id")
    status = sub.add_parser("status", parents=[shared, workers], help="progress of a run")
    status.add_argument("run")
    status.add_argument("--wait", action="store_true", help="wait for the run to finish (re-attach)")
    report = sub.add_parser("report", parents=[shared, output], help="pass@k of a run")
    report.add_argument("run")
    report.add_argument("--k", type=flags.parse_k, help="pass@k to report (default: the run's)")
    report.add_argument("--samples", type=Path, help="the run's samples file, if it has moved (for --per-sample)")
    sub.add_parser("runs", parents=[shared], help="list runs").add_argument("--json", action="store_true")
    compared = sub.add_parser("compare", parents=[shared], help="run B against run A: pass@k, interval, tasks")
    compared.add_argument("a", metavar="RUN_A")
    compared.add_argument("b", metavar="RUN_B")
    compared.add_argument("--k", type=flags.parse_k, help="pass@k to compare (default: run A's)")
    compared.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    compared.add_argument("--html", type=Path, metavar="OUT.html", help="also write the comparison as one HTML page")
    sub.add_parser("workers", parents=[shared], help="workers seen in the last hour").add_argument(
        "--json", action="store_true"
    )
    cancel = sub.add_parser("cancel", parents=[shared], help="drop a run's waiting jobs (results are kept)")
    cancel.add_argument("run")
    priority = sub.add_parser("priority", parents=[shared], help="change a run's priority while it runs")
    priority.add_argument("run")
    priority.add_argument("priority", type=flags.parse_priority, help="high, normal, low or a whole number")
    resume = sub.add_parser("resume", parents=[shared, workers], help="enqueue again the samples with no result")
    resume.add_argument("run")
    resume.add_argument("--samples", type=Path, help="the run's samples file, if it has moved")
    worker = sub.add_parser("worker", parents=[shared], help="run a worker (celery worker with codeexec's settings)")
    worker.add_argument("--concurrency", type=int, help="pool processes (default: cores)")
    worker.add_argument("--hostname", help="worker name (default: celery@<host>)")
    sub.add_parser("server", parents=[shared], help="run the private Valkey in the foreground")
    sub.add_parser("stop", parents=[shared], help="stop the warm private Valkey and local workers now")
    doctor.add_flags(
        sub.add_parser("doctor", parents=[shared], help="the protections candidates run under on this machine")
    )
    venvs.add_flags(sub.add_parser("env", parents=[shared], help="build or list a problem set's libraries"))
    serve.add_flags(sub.add_parser("serve", parents=[shared, workers], help="the HTTP service (docs/service.md)"))
    flower = sub.add_parser("flower", parents=[shared], help="Celery's Flower monitor (needs codeexec[monitor])")
    flower.add_argument("--port", type=int, default=5555)
    return parser


def main(argv: list[str] | None = None) -> int:
    stop_on_sigterm()
    args = build_parser().parse_args(argv)
    for flag, variable in (("redis_url", "CODEEXEC_REDIS_URL"), ("data_dir", "CODEEXEC_DATA_DIR")):
        if getattr(args, flag, None):
            os.environ[variable] = str(getattr(args, flag))
    get_settings.cache_clear()
    try:
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"codeexec: error: {exc}", file=sys.stderr)
        return 2
    except redis.RedisError as exc:
        print(f"codeexec: error: Redis: {exc}", file=sys.stderr)
        return 3
    except Stopped as stop:
        print(f"codeexec: stopped by {stop}", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        print("codeexec: interrupted", file=sys.stderr)
        return 130


# ---- commands ----------------------------------------------------------------------------------------


def _prepare(args: argparse.Namespace) -> Submission:
    """Read and validate every input before anything is written anywhere."""
    return prepare(
        args.problems,
        args.samples,
        flags.run_options(args),
        run=args.run,
        warn=lambda message: print(f"codeexec: {message}", file=sys.stderr),
    )


def cmd_eval(args: argparse.Namespace) -> int:
    submission = _prepare(args)
    settings = get_settings()
    meta = submission.meta
    fit(meta, _results_files(args))  # before it is judged
    with backend(settings, args.workers, run_jobs=True) as client:
        from codeexec.producer.entry.display import stderr, wait_for

        serving = server_id(client)  # a restart once the run is submitted is said, however soon it comes
        run = Run.submit(client, submission)
        stderr.print(f"run [bold]{meta.run}[/]: {meta.n_samples} samples over {meta.n_tasks} tasks")
        try:
            wait_for(run, show=not args.json, serving=serving)
        except KeyboardInterrupt:
            stderr.print(f"interrupted; nothing is lost: [bold]codeexec status {meta.run} --wait[/] carries on")
            raise
        return _report(run, meta.options.k, args, None)


def cmd_submit(args: argparse.Namespace) -> int:
    submission = _prepare(args)
    with backend(get_settings()) as client:
        Run.submit(client, submission)
    print(submission.meta.run)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import print_status, wait_for

    with backend(get_settings(), args.workers, run_jobs=args.wait) as client:
        run = Run.fetch(client, args.run)  # a clear error for a run that does not exist
        if args.wait:
            wait_for(run)
        print_status(run)
    return 0


def cmd_workers(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import print_workers

    with backend(get_settings()) as client:
        listed = leases.workers(client)
        if args.json:
            print(json.dumps([worker.model_dump() for worker in listed]))
        elif listed:
            print_workers(client, listed)
        else:
            print("no worker has been seen in the last hour")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        run = Run.fetch(client, args.run)
        fit(run.meta, _results_files(args))
        return _report(run, args.k or run.meta.options.k, args, args.samples)


def _results_files(args: argparse.Namespace) -> list[str]:
    """The flags of the reference's results files `args` asks for."""
    return [flag for flag, results_file in RESULTS_FILES.items() if getattr(args, results_file.dest)]


def _report(run: Run, ks: list[int], args: argparse.Namespace, moved: Path | None) -> int:
    """Print the run's report and write the files asked for; `moved`: where its samples file is now, if
    not where it was submitted from (the run records that path: for eval, the one it just wrote)."""
    from codeexec.producer.entry.display import print_report, stderr

    report = run.report(ks)
    if args.per_sample:
        count = write_per_sample(run, args.per_sample, moved)
        stderr.print(f"wrote {count} lines to {args.per_sample}")
    if args.html:
        run.html(args.html, ks)
        stderr.print(f"wrote the HTML report to {args.html}")
    for flag in _results_files(args):
        results_file = RESULTS_FILES[flag]
        for line in results_file.write(run, getattr(args, results_file.dest), moved, args.command == "eval"):
            stderr.print(line, soft_wrap=True)
    if args.json:
        document = report.model_dump(exclude={"tasks"})
        document["tasks"] = {task_id: task.model_dump() for task_id, task in report.tasks.items()}
        print(json.dumps(document))
    else:
        print_report(report, args.per_task)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        rows = Codeexec(client).runs()
    if args.json:
        print(json.dumps([row.model_dump() for row in rows]))
    for row in [] if args.json else rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.created))
        score = "-" if row.pass_at_1 is None else f"pass@1 {100 * row.pass_at_1:.2f}%"
        took = "-" if row.took_s is None else f"took {row.took_s:.1f} s"
        priority = f"priority {priority_name(row.priority)}"
        print(
            f"{row.run}  {row.status}  {row.done}/{row.samples} samples  {score}  {priority}  {row.isolation}  "
            f"{started}  {took}"
        )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        comparison = compare_runs(client, args.a, args.b, args.k)
    if args.html:
        comparison_html(comparison, args.html)
        print(f"codeexec: wrote the comparison to {args.html}", file=sys.stderr)
    if args.json:
        print(comparison.model_dump_json(exclude=set() if comparison.left_out else {"left_out"}))
        return 0
    from codeexec.producer.entry.display import print_comparison

    print_comparison(comparison)
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import stderr, wait_for

    with backend(get_settings(), args.workers, run_jobs=True) as client:
        run = Run.fetch(client, args.run)
        count = run.resume(args.samples)
        stderr.print(f"enqueued {count} sample(s) with no result")
        wait_for(run)
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        dropped = Run.fetch(client, args.run).cancel()
    print(f"cancelled {args.run}: dropped {dropped} waiting sample(s); jobs in hand finish; resume carries on")
    return 0


def cmd_priority(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        run = Run.fetch(client, args.run)
        run.set_priority(args.priority)
    print(f"{args.run}: priority {priority_name(run.meta.options.priority)} from its next job on")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from codeexec.worker.queue.app import app  # reads the settings: only once the flags are in the environment

    argv = ["worker", *WORKER_FLAGS, "-Q", queues(environments.served(get_settings()))]
    if args.concurrency:
        argv.append(f"--concurrency={args.concurrency}")
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    app.worker_main(argv)
    return 0


def cmd_server(args: argparse.Namespace) -> int:
    server = EmbeddedServer(get_settings().data_dir)
    if server.running():
        raise InputError(f"a private Valkey is serving {server.data_dir} already ({server.url})")
    try:
        server.start()
        # Inside the try: a signal that arrives as this line is written (whoever reads it may stop us
        # at once) must still stop the server in order.
        print(f"serving {server.url} (data in {server.data_dir}); Ctrl-C stops it", flush=True)
        server.wait()
    finally:
        server.stop()
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    data_dir = get_settings().data_dir.expanduser().resolve()
    print("stopped the warm workers" if resident.stop(data_dir) else f"no warm workers serve {data_dir}")
    return 0


def cmd_flower(args: argparse.Namespace) -> int:
    try:
        import flower  # noqa: F401 — only to say clearly that it is missing
    except ImportError:
        raise InputError("Flower is not installed: pip install 'codeexec[monitor]'") from None
    from codeexec.worker.queue.app import app  # reads the settings: only once the flags are in the environment

    app.start(["flower", f"--port={args.port}"])
    return 0


COMMANDS = {
    "eval": cmd_eval,
    "submit": cmd_submit,
    "status": cmd_status,
    "report": cmd_report,
    "runs": cmd_runs,
    "compare": cmd_compare,
    "workers": cmd_workers,
    "resume": cmd_resume,
    "cancel": cmd_cancel,
    "priority": cmd_priority,
    "worker": cmd_worker,
    "server": cmd_server,
    "stop": cmd_stop,
    "doctor": doctor.run,
    "env": lambda args: venvs.command(args, get_settings().data_dir),
    "flower": cmd_flower,
    "serve": serve.command,
}

if __name__ == "__main__":
    sys.exit(main())
