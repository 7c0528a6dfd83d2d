"""Tests that are a test file: a unittest module's TestCase classes, or a pytest file's tests, run in the
candidate's own process after its program (BigCodeBench, ClassEval, a suite of one's own). Loaded by path
in the candidate's interpreter (worker/candidate/__init__.py); child.py's main() calls run_suite() and
writes the record: a "unit" line as each test ends, then "finished".

The program and the test file are one module, `__test__` (the file `__test__.py`), as BigCodeBench runs
them: the tests use the program's names (its imports too), and tests that patch their own module
(`@patch(__name__ + ".plt.show")`) find it in sys.modules. A test passes unless it fails or errors:
a skip, an expected failure and an unexpected success pass, as in BigCodeBench (its rule is
"no failures, no errors"). With the bigcodebench harness a task runs as in BigCodeBench's own
(bigcodebench_harness.py: what it prints goes nowhere, its process functions are BigCodeBench's);
otherwise what a test prints goes to the candidate's stdout, against its cap.

    suite = {"framework": "unittest" | "pytest", "code": the test file's text,
             "classes": [name, ...] or None (every TestCase class of the module),
             "harness": "codeexec" | "bigcodebench", "detail_chars": how much of a traceback is sent}
"""

import builtins
import sys

import bigcodebench_harness
from failures import describe, message_of

MODULE = "__test__"


def run_suite(candidate: str, suite: dict, report) -> tuple[str, str, str | None]:
    """Run the program and its test file as one module, then the tests; report(name, ended, detail) as
    each ends, ended being "pass", "fail", "error" or "skip". (outcome, detail, message): "pass" when every
    test ran (the host counts the failures), "syntax_error" or "error" when the module did not load."""
    module = type(sys)(MODULE)
    namespace = module.__dict__
    namespace.update(__file__=f"{MODULE}.py", __package__=None, __builtins__=builtins)
    if suite["harness"] == "bigcodebench":
        bigcodebench_harness.set_up(namespace)
    source = candidate + "\n" + suite["code"]
    if suite["framework"] == "pytest":
        return run_pytest(source, suite, report)
    try:
        code = compile(source, f"{MODULE}.py", "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte
        return "syntax_error", describe(exc), message_of(exc)
    try:
        exec(code, namespace)
        sys.modules[MODULE] = module
        tests = load_unittest(module, suite["classes"])
    except BaseException as exc:  # BigCodeBench's "ALL": the module, or its TestCases, did not load
        return "error", describe(exc), message_of(exc)
    tests.run(reporter(report, suite["detail_chars"]))
    return "pass", "", None


def load_unittest(module, classes: list | None):
    """The suite of the named TestCase classes (in that order), or of every one the module defines."""
    import unittest

    loader = unittest.TestLoader()
    if classes is None:
        return loader.loadTestsFromModule(module)
    suite = unittest.TestSuite()
    for name in classes:
        found = getattr(module, name)  # missing: AttributeError, BigCodeBench's "ALL"
        suite.addTests(loader.loadTestsFromTestCase(found))
    return suite


def test_name(test) -> str:
    """'Class.test_x' of a test (its id without the module), or a fixture's description."""
    ident = test.id()
    return ident[len(MODULE) + 1 :] if ident.startswith(MODULE + ".") else ident


def tail(text: str, chars: int) -> str:
    """The end of a traceback, where the exception is."""
    return text if len(text) <= chars else "..." + text[-chars:]


def _reporter_class():
    import unittest

    class Reporter(unittest.TestResult):
        """unittest's result, sending each test's outcome as it ends (a subtest's failure fails its test;
        a class or module fixture that errors is a test of its own, as unittest counts it)."""

        def __init__(self, report, detail_chars: int) -> None:
            super().__init__()
            self.report, self.chars = report, detail_chars
            self.current = None

        def startTest(self, test) -> None:
            super().startTest(test)
            self.current = ["pass", ""]

        def _mark(self, ended: str, test, err) -> None:
            text = tail(self._exc_info_to_string(err, test), self.chars)
            if self.current is None:  # setUpClass, tearDownModule...: outside any test
                self.report(test_name(test), ended, text)
            elif self.current[0] == "pass" or self.current[0] == "skip":
                self.current = [ended, text]

        def addError(self, test, err) -> None:
            super().addError(test, err)
            self._mark("error", test, err)

        def addFailure(self, test, err) -> None:
            super().addFailure(test, err)
            self._mark("fail", test, err)

        def addSubTest(self, test, subtest, err) -> None:
            super().addSubTest(test, subtest, err)
            if err is not None:
                self._mark("fail" if issubclass(err[0], test.failureException) else "error", subtest, err)

        def addSkip(self, test, reason) -> None:
            super().addSkip(test, reason)
            if self.current is not None and self.current[0] == "pass":
                self.current = ["skip", str(reason)[: self.chars]]

        def stopTest(self, test) -> None:
            super().stopTest(test)
            ended, detail = self.current or ["pass", ""]
            self.current = None
            self.report(test_name(test), ended, detail)

    return Reporter


def reporter(report, detail_chars: int):
    """A Reporter (unittest is imported only by a candidate that runs a suite)."""
    return _reporter_class()(report, detail_chars)


def run_pytest(source: str, suite: dict, report) -> tuple[str, str, str | None]:
    """The file written as __test__.py in the working directory and run by pytest in this process, each
    test's report sent as its teardown ends. A file that does not compile, or whose collection fails, did
    not load."""
    try:
        compile(source, f"{MODULE}.py", "exec")
    except (SyntaxError, ValueError) as exc:
        return "syntax_error", describe(exc), message_of(exc)
    try:
        import pytest
    except ImportError as exc:
        return "error", f"pytest is not installed in the candidates' Python ({sys.executable}): {exc}", None
    with open(f"{MODULE}.py", "w", encoding="utf-8") as out:
        out.write(source)
    chars = suite["detail_chars"]
    pending: dict = {}  # each test's (ended, detail) so far, by node id, until its teardown is reported
    broken: list = []  # the first collection error: the file did not load

    class Collector:
        @staticmethod
        def pytest_collectreport(report):
            if report.failed and not broken:
                broken.append(tail(report.longreprtext, chars))

        @staticmethod
        def pytest_runtest_logreport(report):
            ended, detail = pending.get(report.nodeid, ("pass", ""))
            if report.failed and ended in ("pass", "skip"):
                ended = "fail" if report.when == "call" else "error"
                detail = tail(report.longreprtext, chars)
            elif report.skipped and ended == "pass":
                ended, detail = "skip", tail(report.longreprtext, chars)
            pending[report.nodeid] = (ended, detail)
            if report.when == "teardown":
                send(report.nodeid.split("::", 1)[-1].replace("::", "."), *pending.pop(report.nodeid))

    send = report
    arguments = [f"{MODULE}.py", "-q", "-p", "no:cacheprovider", "--capture=sys", "-o", "console_output_style=classic"]
    try:
        pytest.main(arguments, plugins=[Collector()])
    except BaseException as exc:
        return "error", describe(exc), message_of(exc)
    if broken:
        return "error", " ".join(broken[0].split())[-300:], None
    return "pass", "", None
