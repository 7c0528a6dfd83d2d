"""MBPP+ (EvalPlus 0.3.1's tests and verdicts): the bundled v0.1.0, its arguments' types as EvalPlus
reads them, each of its special oracles on the real tasks, large outputs, and a run end to end with
EvalPlus's results file. The agreement with EvalPlus itself is bench/agreement.py --mbppplus."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import MBPPPLUS_PATH, load_problems
from codeexec.protocol.kinds import EvalPlusTests
from codeexec.protocol.models import Truth
from codeexec.protocol.result import Outcome, RunResult
from codeexec.worker.candidate.values import digest
from codeexec.worker.judging.kinds import evalplus
from helpers import codeexec, write_jsonl

both_isolations = pytest.mark.usefixtures("isolation")


@pytest.fixture(scope="module")
def mbppplus() -> dict[str, EvalPlusTests]:
    tests = {task_id: problem.tests for task_id, problem in load_problems("mbppplus").items()}
    assert all(isinstance(io, EvalPlusTests) for io in tests.values())
    return tests  # type: ignore[return-value]


def judged(tests: EvalPlusTests, code: str) -> RunResult:
    truth = evalplus.compute_truth(tests, {})
    assert isinstance(truth, Truth), truth
    return evalplus.run_sample(code, tests, truth, 1.0, 4.0, {})


def test_the_bundled_set_is_mbppplus_v0_1_0(mbppplus: dict[str, EvalPlusTests]) -> None:
    text = gzip.decompress(MBPPPLUS_PATH.read_bytes())
    assert len(text.splitlines()) == len(mbppplus) == 399
    assert hashlib.md5(text, usedforsecurity=False).hexdigest() == "ebe95df0d5220f00cedd6f4bddea35e4"
    oracles = {task_id: io.oracle for task_id, io in mbppplus.items() if io.oracle != "equal"}
    assert oracles == {
        **dict.fromkeys(["Mbpp/2", "Mbpp/7", "Mbpp/111", "Mbpp/140", "Mbpp/232", "Mbpp/249", "Mbpp/579"], "set"),
        "Mbpp/769": "set",
        **dict.fromkeys(["Mbpp/737", "Mbpp/787", "Mbpp/794"], "not_none"),
        "Mbpp/164": "any",
        "Mbpp/295": "or_zero",
        "Mbpp/581": "surface_area",
        "Mbpp/558": "digit_distance",
    }
    assert evalplus.inputs_of(mbppplus["Mbpp/793"])["plus"] == []  # the file has {}: no inputs, as EvalPlus reads it
    assert sum(sum(map(len, evalplus.inputs_of(io).values())) for io in mbppplus.values()) == 1236 + 42082


def test_arguments_have_the_types_evalplus_gives_them(mbppplus: dict[str, EvalPlusTests]) -> None:
    # The file is JSON; EvalPlus makes tuples, sets and complex numbers of some tasks' arguments.
    assert evalplus.inputs_of(mbppplus["Mbpp/2"])["base"][0] == [(3, 4, 5, 6), (5, 7, 4, 10)]
    assert evalplus.inputs_of(mbppplus["Mbpp/124"])["base"][0] == [0.0, 1j]
    assert type(evalplus.inputs_of(mbppplus["Mbpp/124"])["base"][0][0]) is float
    assert evalplus.inputs_of(mbppplus["Mbpp/252"])["base"][0] == [1 + 0j]
    # Empty lists: {}, a dict, as EvalPlus's.
    assert evalplus.inputs_of(mbppplus["Mbpp/115"])["base"][0] == [[{}, {}, {}]]
    assert type(evalplus.inputs_of(mbppplus["Mbpp/115"])["base"][0][0][0]) is dict
    sets = evalplus.inputs_of(mbppplus["Mbpp/115"])["plus"]
    assert any(isinstance(item, set) for args in sets for item in args[0])
    # Tuples all the way down.
    assert evalplus.inputs_of(mbppplus["Mbpp/580"])["base"][0] == [(4, 5, (7, 6, (2, 4)), 6, 8)]
    assert all(type(value) is tuple for value in evalplus.inputs_of(mbppplus["Mbpp/722"])["base"][0][0].values())
    assert evalplus.inputs_of(mbppplus["Mbpp/75"])["base"][0] == [[(6, 24, 12), (7, 9, 6), (12, 18, 21)], 6]
    assert all(io.typed for io in mbppplus.values())


def test_a_file_in_mbppplus_shape_is_recognized(tmp_path: Path) -> None:
    record = {
        "task_id": "Mbpp/2",
        "prompt": '"""\nShared elements.\n"""\n',
        "entry_point": "similar_elements",
        "canonical_solution": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
        "base_input": [[[1, 2], [2, 3]]],
        "plus_input": [],
        "atol": 0,
    }
    path = write_jsonl(tmp_path / "mbpp.jsonl", [record])
    (problem,) = load_problems(str(path)).values()
    tests = problem.tests
    assert (
        isinstance(tests, EvalPlusTests)
        and tests.oracle == "set"
        and evalplus.inputs_of(tests)["base"] == [[(1, 2), (2, 3)]]
    )
    bad = write_jsonl(tmp_path / "bad.jsonl", [record, record | {"task_id": "Mbpp/124", "base_input": [[1]]}])
    with pytest.raises(InputError, match=r"bad\.jsonl:2: Mbpp/124: an input is not of the form EvalPlus reads"):
        load_problems(str(bad))


@both_isolations
def test_set_compared_tasks(mbppplus: dict[str, EvalPlusTests]) -> None:
    tests = mbppplus["Mbpp/2"]  # similar_elements: EvalPlus compares set(output) with set(expected)
    reordered = "def similar_elements(a, b):\n    return sorted(set(a) & set(b), reverse=True)\n"
    assert judged(tests, reordered).statuses == {"base": "pass", "plus": "pass"}
    generator = "def similar_elements(a, b):\n    return (x for x in set(a) if x in b)\n"  # sent as its items
    assert judged(tests, generator).exit_code is Outcome.PASS
    one_short = "def similar_elements(a, b):\n    return sorted(set(a) & set(b))[1:]\n"
    assert judged(tests, one_short).statuses["base"] == "fail"
    not_iterable = "def similar_elements(a, b):\n    return 3\n"
    assert judged(tests, not_iterable).statuses == {"base": "fail", "plus": "fail"}


@both_isolations
def test_not_none_tasks(mbppplus: dict[str, EvalPlusTests]) -> None:
    tests = mbppplus["Mbpp/794"]  # text_starta_endb: the canonical solution returns a re.Match or None
    match = "import re\ndef text_starta_endb(text):\n    return re.search('a.*?b$', text)\n"
    assert judged(tests, match).exit_code is Outcome.PASS
    as_bool = "import re\ndef text_starta_endb(text):\n    return bool(re.search('a.*?b$', text))\n"
    assert judged(tests, as_bool).exit_code is Outcome.PASS
    anything = "import re\ndef text_starta_endb(text):\n    return 'found' if re.search('a.*?b$', text) else None\n"
    assert judged(tests, anything).exit_code is Outcome.PASS
    never = "def text_starta_endb(text):\n    return None\n"
    assert judged(tests, never).exit_code is Outcome.ASSERTION_FAIL
    inverted = "import re\ndef text_starta_endb(text):\n    return not re.search('a.*?b$', text)\n"
    assert judged(tests, inverted).statuses == {"base": "fail", "plus": "fail"}


@both_isolations
def test_the_other_special_oracles(mbppplus: dict[str, EvalPlusTests]) -> None:
    anything = "def are_equivalent(a, b):\n    return object()\n"  # Mbpp/164: whatever it returns passes
    assert judged(mbppplus["Mbpp/164"], anything).exit_code is Outcome.PASS
    raising = "def are_equivalent(a, b):\n    raise ValueError\n"
    assert judged(mbppplus["Mbpp/164"], raising).statuses == {"base": "fail", "plus": "fail"}
    zero = "def sum_div(n):\n    return 0\n"  # Mbpp/295: 0 passes, whatever the sum
    assert judged(mbppplus["Mbpp/295"], zero).exit_code is Outcome.PASS
    assert judged(mbppplus["Mbpp/295"], "def sum_div(n):\n    return 1\n").statuses["base"] == "fail"
    # Mbpp/581: the rounded area with the perpendicular height passes besides the canonical solution's
    perpendicular = (
        "import math\ndef surface_Area(b, h):\n    return round(b * b + 2 * b * math.sqrt((b / 2) ** 2 + h * h))\n"
    )
    assert judged(mbppplus["Mbpp/581"], perpendicular).exit_code is Outcome.PASS
    assert judged(mbppplus["Mbpp/581"], "def surface_Area(b, h):\n    return b * b\n").statuses["base"] == "fail"
    # Mbpp/558: the digit distance with the shorter number padded by zeros passes
    padded = (
        "def digit_distance_nums(a, b):\n    x, y = str(a), str(b)\n    w = max(len(x), len(y))\n"
        "    return sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(w), y.zfill(w)))\n"
    )
    assert judged(mbppplus["Mbpp/558"], padded).exit_code is Outcome.PASS
    assert judged(mbppplus["Mbpp/558"], "def digit_distance_nums(a, b):\n    return -1\n").statuses["base"] == "fail"


@both_isolations
def test_types_and_tolerance_as_evalplus_compares(mbppplus: dict[str, EvalPlusTests]) -> None:
    tests = mbppplus["Mbpp/2"].model_copy(update={"oracle": "equal"})  # the same task, compared by ==
    listed = "def similar_elements(a, b):\n    return list(set(a) & set(b))\n"
    assert judged(tests, listed).statuses["base"] == "fail"  # a list is never == a tuple
    floats = mbppplus["Mbpp/124"]  # angle_complex: floats, within 1e-6 absolute and 1e-7 relative
    near = "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(a + b) * (1 + 3e-8)\n"
    assert judged(floats, near).exit_code is Outcome.PASS
    far = "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(a + b) + 1e-3\n"
    assert judged(floats, far).statuses["base"] == "fail"


def test_large_outputs_are_digested_without_holding_their_bytes() -> None:
    # Digests of lists of strings: one part per list, the same for == values (a str subclass, a tuple
    # is not a list) and for nothing else.
    words = [f"w{i}" for i in range(100)]

    class Text(str):
        pass

    assert digest(words) == digest([Text(word) for word in words])
    assert digest(words) != digest(tuple(words))
    assert digest(words) != digest(words[::-1])
    assert digest(["ab", "c"] * 8) != digest(["a", "bc"] * 8)
    tests = EvalPlusTests(
        entry_point="f",
        solution="def f(n):\n    return [('a', 'bc', str(i)) * 3 for i in range(n)]\n",
        base=[[200_000]],
    )
    same = "def f(n):\n    return [tuple(['a', 'bc', str(i)] * 3) for i in range(n)]\n"
    assert judged(tests, same).exit_code is Outcome.PASS
    differ = "def f(n):\n    return [('a', 'bc', str(i)) * 3 for i in range(n - 1)] + [('a', 'b', 'c')]\n"
    assert judged(tests, differ).statuses["base"] == "fail"


SAMPLES = [
    # (task_id, solution, EvalPlus 0.3.1's statuses for this very file: evalplus.evaluate --dataset mbpp,
    # MBPP_OVERRIDE_PATH a file of these four tasks of v0.1.0, gave these, its pass@1 and fail tests below)
    ("Mbpp/2", "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b)))\n", ("pass", "pass")),
    ("Mbpp/2", "def similar_elements(a, b):\n    return ()\n", ("fail", "fail")),
    ("Mbpp/124", "import cmath\ndef angle_complex(a, b):\n    return 0.5\n", ("fail", "fail")),
    ("Mbpp/794", "def text_starta_endb(t):\n    return t.startswith('a') and t.endswith('b')\n", ("pass", "fail")),
    ("Mbpp/17", "def square_perimeter(a):\n    return 4 * a\n", ("pass", "pass")),
    ("Mbpp/17", "def square_perimeter(a):\n    while True:\n        pass\n", ("fail", "fail")),
    # the program's own run takes each check's whole time: both time out before an input is done
    ("Mbpp/17", "import time\ntime.sleep(100)\ndef square_perimeter(a):\n    return 4 * a\n", ("timeout", "timeout")),
]


@pytest.mark.once  # agreement with a reference: the candidates' verdicts, judged under every Python in the first pass
def test_mbppplus_end_to_end_with_evalplus_results(env: dict[str, str], tmp_path: Path) -> None:
    samples = write_jsonl(tmp_path / "samples.jsonl", [{"task_id": t, "solution": s} for t, s, _ in SAMPLES])
    per_sample, exported = tmp_path / "per-sample.jsonl", tmp_path / "eval_results.json"
    out = codeexec(
        env,
        *("eval", "--problems", "mbppplus", "--samples", str(samples), "--workers", "2", "--json"),
        *("--per-sample", str(per_sample), "--evalplus-results", str(exported)),
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    ours = [json.loads(line) for line in per_sample.open()]
    assert [(r["base_status"], r["plus_status"]) for r in ours] == [statuses for *_, statuses in SAMPLES]
    document = json.loads(out.stdout)
    # Per task: Mbpp/2 1 of 2 on both, Mbpp/124 0, Mbpp/794 1 base and 0 plus, Mbpp/17 1 of 3
    assert document["base_pass_at_k"]["1"] == pytest.approx((1 / 2 + 0 + 1 + 1 / 3) / 4)
    assert document["pass_at_k"]["1"] == pytest.approx((1 / 2 + 0 + 0 + 1 / 3) / 4)
    results = json.loads(exported.read_text())
    assert results["hash"] == "ebe95df0d5220f00cedd6f4bddea35e4"  # EvalPlus's, of the same file
    (angle,) = results["eval"]["Mbpp/124"]
    assert angle["base_fail_tests"] == [["0.0", "1j"]]  # as EvalPlus writes Mbpp/124's arguments
    first, second = results["eval"]["Mbpp/2"]
    assert (first["base_status"], second["base_status"]) == ("pass", "fail")
    assert second["base_fail_tests"] == [[[3, 4, 5, 6], [5, 7, 4, 10]]]
    *_, endless, sleeper = results["eval"]["Mbpp/17"]
    assert endless["base_fail_tests"] == [[10]]  # its first input, over its time limit
    assert (sleeper["base_fail_tests"], sleeper["plus_fail_tests"]) == ([], [])  # no input done in either check
