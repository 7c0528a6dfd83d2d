"""A run, or two runs compared, as one self-contained HTML page: inline CSS, and charts as inline SVG
drawn here from the numbers. No script, font or image is fetched from anywhere, so the page opens
offline, and it prints (the charts are vectors; a print style drops the colours' backgrounds).

The charts are drawn by hand rather than with a plotting library: they are bars and whiskers, a few
dozen lines of SVG, where matplotlib would be a dependency of ~50 MB and would turn the numbers into
paths. Here every figure on the page is text in its own element (ids `pass-at-<k>`, `ci-<k>`,
`outcome-<exit code>`, `task-<task id>`), which the tests read back and compare with the JSON report.
"""

from __future__ import annotations

import time
from html import escape
from urllib.parse import quote

from codeexec.producer.results.breakdown import TaskOutcomes
from codeexec.producer.results.compare import Comparison
from codeexec.producer.results.intervals import LEVEL, RESAMPLES
from codeexec.producer.results.report import RunReport
from codeexec.protocol.result import Outcome

OUTCOME_COLOURS = {
    Outcome.PASS.value: "#2e7d32",
    Outcome.ASSERTION_FAIL.value: "#f9a825",
    Outcome.SYNTAX_ERROR.value: "#8e24aa",
    Outcome.TIMEOUT.value: "#1565c0",
    Outcome.ERROR.value: "#c62828",
    Outcome.INFRA_ERROR.value: "#757575",
}
TOP_FAILING = 10  # tasks listed under "most timeouts and errors"

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 70em;
       padding: 0 1em; color: #212121; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 2em; }
.sub { color: #616161; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { padding: 0.2em 0.8em; text-align: left; }
th { border-bottom: 1px solid #9e9e9e; } tr:nth-child(even) td { background: #f5f5f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.key { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; vertical-align: middle; }
code { font-size: 0.92em; } svg { display: block; margin: 0.5em 0; } svg text { font: 11px sans-serif; }
:target td { background: #fff59d; }
@media print { body { margin: 0; max-width: none; } tr:nth-child(even) td { background: none; }
               h2 { break-after: avoid; } }
"""


def percent(value: float) -> str:
    return f"{100 * value:.2f}%"


def interval(bounds: tuple[float, float]) -> str:
    return f"[{percent(bounds[0])}, {percent(bounds[1])}]"


def task_anchor(task_id: str) -> str:
    return f"task-{task_id}"


def _time_limits(report: RunReport) -> str:
    """The run's time limits, each with what it limits."""
    limits = [f"{escape(tests)}: {escape(limits)}" for tests, limits in report.limits.items()]
    return "<br>".join(limits) or "—"


def _when(timestamp: float | None) -> str:
    return "—" if timestamp is None else time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(timestamp))


def _page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{escape(title)}</title>",
            f"<style>{STYLE}</style></head><body>",
            *body,
            "</body></html>",
        ]
    )


def _table(head: list[str], rows: list[list[str]], ident: str = "") -> str:
    """Headings and cells are HTML already; a cell that starts with '<td' is taken whole (ids, classes)."""
    opening = f'<table id="{ident}">' if ident else "<table>"
    cells = [opening, "<tr>" + "".join(f"<th>{name}</th>" for name in head) + "</tr>"]
    for row in rows:
        cells.append("<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in row) + "</tr>")
    cells.append("</table>")
    return "\n".join(cells)


def _num(text: str, ident: str = "") -> str:
    return f'<td class="num"{f" id={chr(34)}{escape(ident)}{chr(34)}" if ident else ""}>{text}</td>'


def _interval_chart(
    label: str, rows: list[tuple[str, float, tuple[float, float] | None]], difference: bool = False
) -> str:
    """Horizontal bars from 0 to each value, with its interval as a whisker; `rows`: (name, value,
    interval). The axis runs from 0 to 100 %, or for differences, in points from the least to the
    greatest (and 0)."""
    width, left, bar, gap = 560, 110, 18, 8
    ends = [0.0, *(value for _, value, _ in rows), *(end for *_, ci in rows if ci for end in ci)]
    least, most = (min(ends), max(ends)) if difference else (0.0, 1.0)
    span = (most - least) or 1.0

    def x(value: float) -> float:
        return left + (value - least) / span * (width - left - 20)

    height = len(rows) * (bar + gap) + 24
    parts = [f'<svg role="img" aria-label="{escape(label)}" width="{width}" height="{height}">']
    parts.append(f'<line x1="{x(0):.1f}" y1="0" x2="{x(0):.1f}" y2="{height - 18}" stroke="#9e9e9e"/>')
    for row, (name, value, ci) in enumerate(rows):
        y = row * (bar + gap)
        start, end = sorted((x(0), x(value)))
        parts.append(f'<text x="0" y="{y + 13}">{escape(name)}</text>')
        parts.append(
            f'<rect x="{start:.1f}" y="{y}" width="{max(end - start, 1):.1f}" height="{bar}" fill="#90caf9">'
            f"<title>{escape(name)}: {percent(value)}</title></rect>"
        )
        if ci:
            middle = y + bar / 2
            parts.append(
                f'<path d="M{x(ci[0]):.1f} {middle}H{x(ci[1]):.1f}M{x(ci[0]):.1f} {y + 4}V{y + bar - 4}'
                f'M{x(ci[1]):.1f} {y + 4}V{y + bar - 4}" stroke="#0d47a1" stroke-width="1.5" fill="none"/>'
            )
    for value in dict.fromkeys((least, 0.0, most) if difference else (0.0, 0.5, 1.0)):
        tick = f"{100 * value:+.1f}" if difference else percent(value)
        parts.append(f'<text x="{x(value):.1f}" y="{height - 4}" text-anchor="middle">{tick}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _outcome_bar(outcomes: dict[str, int]) -> str:
    total = sum(outcomes.values()) or 1
    width, height, at = 560, 22, 0.0
    parts = [f'<svg role="img" aria-label="outcome mix" width="{width}" height="{height}">']
    for name, count in outcomes.items():
        if count:
            share = count / total * width
            parts.append(
                f'<rect x="{at:.1f}" y="0" width="{share:.1f}" height="{height}" fill="{OUTCOME_COLOURS[name]}">'
                f"<title>{escape(name)}: {count}</title></rect>"
            )
            at += share
    parts.append("</svg>")
    return "\n".join(parts)


def _task_chart(rates: list[tuple[str, float]]) -> str:
    """A bar per task, hardest first; each bar links to the task's row."""
    count = len(rates) or 1
    width, height = 900, 160
    step = width / count
    parts = [f'<svg role="img" aria-label="pass rate per task" width="{width}" height="{height + 16}">']
    for index, (task_id, rate) in enumerate(rates):
        tall = max(rate * height, 1)
        parts.append(
            f'<a href="#{quote(task_anchor(task_id))}"><rect x="{index * step:.2f}" y="{height - tall:.1f}" '
            f'width="{max(step - 0.5, 0.5):.2f}" height="{tall:.1f}" fill="#43a047">'
            f"<title>{escape(task_id)}: {percent(rate)}</title></rect></a>"
        )
    parts.append(f'<text x="0" y="{height + 13}">hardest</text>')
    parts.append(f'<text x="{width}" y="{height + 13}" text-anchor="end">easiest</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def render_run(report: RunReport, outcomes: dict[str, TaskOutcomes]) -> str:
    """The page of one run: `outcomes` per task from producer/results/breakdown.py."""
    meta = report.meta
    ks = list(report.pass_at_k)
    body = [
        f"<h1>codeexec run <code>{escape(report.run)}</code></h1>",
        f'<p class="sub">{report.n_done} of {report.n_samples} samples over {len(report.tasks)} tasks'
        f"{'' if report.complete else ' (incomplete)'}; problems <code>{escape(meta.problems)}</code></p>",
        "<h2>pass@k</h2>",
        _table(
            ["k", "pass@k", f"{LEVEL:.0%} interval"],
            [
                [
                    k,
                    _num(percent(report.pass_at_k[k]), f"pass-at-{k}"),
                    _num(interval(report.pass_at_k_ci95[k]), f"ci-{k}"),
                ]
                for k in ks
            ],
        ),
        _interval_chart("pass@k", [(f"pass@{k}", report.pass_at_k[k], report.pass_at_k_ci95.get(k)) for k in ks]),
        f'<p class="sub">The interval: a percentile bootstrap over tasks ({RESAMPLES:,} resamples of the '
        "tasks, with replacement, from a fixed seed; producer/results/intervals.py). It is the spread from which tasks "
        "the benchmark happens to hold, not from the samples drawn within a task.</p>",
    ]
    if report.base_pass_at_k:
        base = ", ".join(f"pass@{k} {percent(value)}" for k, value in report.base_pass_at_k.items())
        body.append(f"<p>On the base tests alone (HumanEval's): {base}.</p>")
    for k, why in report.left_out.items():
        body.append(f"<p>pass@{escape(k)} is not reported: {escape(why)}.</p>")

    body += ["<h2>Outcomes</h2>", _outcome_bar(report.outcomes)]
    body.append(
        _table(
            ["outcome", "samples", "share"],
            [
                [
                    f'<span class="key" style="background:{OUTCOME_COLOURS[name]}"></span>{escape(name)}',
                    _num(str(count), f"outcome-{name}"),
                    _num(percent(count / (report.n_done or 1))),
                ]
                for name, count in report.outcomes.items()
            ],
        )
    )

    rates = sorted(
        ((task_id, task.c / task.n if task.n else 0.0) for task_id, task in report.tasks.items()),
        key=lambda pair: pair[1],
    )
    body += [
        "<h2>Pass rate per task</h2>",
        '<p class="sub">c / n of each task, hardest first; a bar links to its row below.</p>',
        _task_chart(rates),
    ]

    failing = sorted(
        (item for item in outcomes.items() if item[1].failing), key=lambda item: (-item[1].failing, item[0])
    )[:TOP_FAILING]
    body.append("<h2>Most timeouts and errors</h2>")
    if failing:
        body.append(
            _table(
                ["task", "timeouts", "errors", "most common reasons"],
                [
                    [
                        f'<a href="#{quote(task_anchor(task_id))}">{escape(task_id)}</a>',
                        _num(str(seen.outcomes.get(Outcome.TIMEOUT.value, 0))),
                        _num(str(seen.outcomes.get(Outcome.ERROR.value, 0))),
                        "<br>".join(f"{count} &times; <code>{escape(reason)}</code>" for reason, count in seen.reasons),
                    ]
                    for task_id, seen in failing
                ],
                ident="failing",
            )
        )
    else:
        body.append("<p>None.</p>")

    failed_tests = sorted(
        ((task_id, name, count, report.tasks[task_id].n) for task_id, seen in outcomes.items()
         for name, count in seen.failed_tests.items()),
        key=lambda row: (-row[2] / (row[3] or 1), row[0], row[1]),
    )[:TOP_FAILING]  # fmt: skip
    if failed_tests:  # test files (BigCodeBench): which tests fail most
        body.append("<h2>Tests that fail most</h2>")
        body.append(
            _table(
                ["task", "test", "failed in", "of samples"],
                [
                    [
                        f'<a href="#{quote(task_anchor(task_id))}">{escape(task_id)}</a>',
                        f"<code>{escape(name)}</code>",
                        _num(str(count)),
                        _num(str(n)),
                    ]
                    for task_id, name, count, n in failed_tests
                ],
                ident="failed-tests",
            )
        )

    judged = sum(report.judged.values())
    protections = "<br>".join(
        f"{escape(host)}: {escape(under)} ({count})"
        for host, seen in report.protections.items()
        for under, count in seen.items()
    )
    rows = [
        ["problems", f"<code>{escape(meta.problems)}</code><br>sha256 <code>{meta.problems_sha256 or '—'}</code>"],
        ["samples", f"<code>{escape(meta.samples_path)}</code><br>sha256 <code>{meta.samples_sha256}</code>"],
        ["time limit", _time_limits(report)],
        ["hash seed", str(report.hash_seed)],
        ["isolation", escape(report.isolation)],
        ["sandbox on each host (what candidates ran under)", protections or "—"],
        [
            "tests compared by the worker (the candidate sends its value; the rest in its own process)",
            f"{report.judged.get('host-compared', 0)} of {judged} tests" if judged else "—",
        ],
        ["codeexec", escape(meta.version or "unknown")],
        [
            "workers",
            "<br>".join(f"{escape(worker)}: {count}" for worker, count in report.workers.items()) or "—",
        ],
        ["submitted", _when(meta.created)],
        ["first result", _when(report.first_result)],
        ["last result", _when(report.last_result)],
        ["samples/s", f"{report.samples_per_s:.1f} (submission to last result)" if report.samples_per_s else "—"],
    ]
    body += ["<h2>Run</h2>", _table(["", ""], rows)]
    for note in report.notes:
        body.append(f"<p>Note: {escape(note)}</p>")

    body.append("<h2>Tasks</h2>")
    body.append(
        _table(
            ["task", "n", "c", *[f"pass@{k}" for k in ks], "outcomes"],
            [
                [
                    f'<td id="{escape(task_anchor(task_id))}">{escape(task_id)}</td>',
                    _num(str(task.n)),
                    _num(str(task.c)),
                    *[_num(percent(task.pass_at_k[k])) if k in task.pass_at_k else _num("—") for k in ks],
                    ", ".join(f"{escape(name)} {count}" for name, count in sorted(outcomes[task_id].outcomes.items()))
                    if task_id in outcomes
                    else "—",
                ]
                for task_id, task in report.tasks.items()
            ],
        )
    )
    body.append(f'<p class="sub">Written by codeexec {escape(meta.version or "")} on {_when(time.time())}.</p>')
    return _page(f"codeexec: {report.run}", body)


def render_comparison(comparison: Comparison) -> str:
    """The page of two runs compared (producer/results/compare.py)."""
    a, b = comparison.a, comparison.b
    ks = list(comparison.pass_at_k)
    body = [
        f"<h1>codeexec: <code>{escape(b)}</code> against <code>{escape(a)}</code></h1>",
        f'<p class="sub">{comparison.tasks_compared} tasks in both; differences are B &minus; A.</p>',
        "<h2>pass@k</h2>",
        _table(
            ["k", "A", "B", "B &minus; A", f"{LEVEL:.0%} interval of B &minus; A"],
            [
                [
                    k,
                    _num(percent(figures.a), f"a-pass-at-{k}"),
                    _num(percent(figures.b), f"b-pass-at-{k}"),
                    _num(f"{100 * figures.diff:+.2f} points", f"diff-{k}"),
                    _num(f"[{100 * figures.ci95[0]:+.2f}, {100 * figures.ci95[1]:+.2f}]", f"ci-{k}"),
                ]
                for k, figures in comparison.pass_at_k.items()
            ],
        ),
        _interval_chart(
            "B minus A",
            [(f"pass@{k}", comparison.pass_at_k[k].diff, comparison.pass_at_k[k].ci95) for k in ks],
            difference=True,
        ),
        f'<p class="sub">The interval: a paired percentile bootstrap over the shared tasks ({RESAMPLES:,} '
        "resamples). A task is gained or lost when its pass@1 moved by more than half, or by a difference "
        "Fisher's exact test finds significant (p &lt; 0.05) (producer/results/intervals.py).</p>",
    ]
    for title, tasks, ident in (
        ("Gained (B solves, A did not)", comparison.gained, "gained"),
        ("Lost (A solved, B does not)", comparison.lost, "lost"),
        (f"Only in A ({a})", comparison.only_in_a, "only-in-a"),
        (f"Only in B ({b})", comparison.only_in_b, "only-in-b"),
    ):
        body.append(f"<h2>{escape(title)}: {len(tasks)}</h2>")
        body.append(f'<p id="{ident}">{", ".join(escape(task) for task in tasks) or "none"}</p>')
    return _page(f"codeexec: {b} against {a}", body)
