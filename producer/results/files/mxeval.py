"""mxeval's own results file for a run of programs in other languages: the `<samples>_results.jsonl` its
evaluate_functional_correctness writes, so that its readers read codeexec's results."""

from __future__ import annotations

import json
from pathlib import Path

from codeexec.producer.inputs.files import write_whole
from codeexec.producer.results.files import ResultsFile
from codeexec.producer.results.persample import Recorded, samples_with_results
from codeexec.protocol.result import Outcome


def write(run: Recorded, out: Path, samples_path: Path | None = None, make: bool = False) -> list[str]:
    """Write `out` as mxeval's evaluate_functional_correctness writes `<samples>_results.jsonl`: each sample
    {task_id, completion, language, result, passed, time_elapsed} in the samples' order (result: the
    program's stderr, or the compiler's; time_elapsed in ms)."""
    problems, found = samples_with_results(run, samples_path)
    lines = []
    for line, stored in found:
        language = problems[line.task_id].tests.program_language()
        said = stored.script.stderr if stored.script else stored.detail
        lines.append(
            {
                "task_id": line.task_id,
                line.sample.kind.value: line.sample.text,
                "language": language,
                "result": said,
                "passed": stored.exit_code is Outcome.PASS,
                "time_elapsed": round(stored.duration_s * 1000, 3),
            }
        )
    write_whole(out, "".join(json.dumps(entry) + "\n" for entry in lines))
    return [f"wrote mxeval's results of {len(lines)} samples to {out}"]


FILE = ResultsFile(
    "--mxeval-results",
    "OUT.jsonl",
    "programs in other languages: also write mxeval's _results.jsonl for the run",
    frozenset({"program"}),
    write,
)
