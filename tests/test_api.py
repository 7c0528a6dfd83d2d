"""The Python API (producer/entry/api.py): the example of docs/reports.md, run as it is written there, on the
private Valkey it starts itself, with real workers; and the API's own errors."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codeexec.producer.entry.api import prepare
from codeexec.producer.inputs.files import InputError
from helpers import ROOT, assertions_of


def api_example() -> str:
    text = (ROOT / "docs" / "reports.md").read_text()
    after = text.split("A test runs this example as it is written here", 1)[1]
    match = re.search(r"```python\n(.*?)```", after, re.DOTALL)
    assert match, "the API example of docs/reports.md"
    return match.group(1)


def test_the_api_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(api_example())
    environment = {name: value for name, value in os.environ.items() if name != "CODEEXEC_REDIS_URL"}
    environment |= {"CODEEXEC_DATA_DIR": str(tmp_path / "data"), "CODEEXEC_WORKERS": "2"}
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "3 of 3 samples" in lines  # the progress callback saw the end
    assert "pass@1 0.250, 95% interval [0.000, 0.500]" in lines  # HumanEval/0: 1 of 2; HumanEval/2: 0 of 1
    assert "HumanEval/0 n 2 c 1" in lines and "HumanEval/2 n 1 c 0" in lines
    assert lines[-4:-1] == ["HumanEval/0 0 pass", "HumanEval/0 1 assertion_fail", "HumanEval/2 0 assertion_fail"]
    # HumanEval/0 went from 1 of 1 to 1 of 2: not more than half, and no test can tell; HumanEval/2 flipped.
    assert lines[-1] == "lost against the canonical solutions: ['HumanEval/2'] (-1.0, -0.5)"
    assert 'id="pass-at-1">25.00%<' in (tmp_path / "report.html").read_text()


def test_bad_samples_given_as_objects_say_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEEXEC_DATA_DIR", str(tmp_path))
    from codeexec.protocol.settings import get_settings

    get_settings.cache_clear()
    with pytest.raises(InputError, match=r"^samples given as objects, record 2: expected exactly one of completion"):
        prepare("humaneval", [{"task_id": "HumanEval/0", "completion": ""}, {"task_id": "HumanEval/0"}])
    with pytest.raises(InputError, match="samples given as objects, record 1: cannot be written as JSON"):
        prepare("humaneval", [{"task_id": "HumanEval/0", "completion": object()}])
    get_settings.cache_clear()


def test_problems_and_samples_given_as_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEEXEC_DATA_DIR", str(tmp_path))
    from codeexec.protocol.settings import get_settings

    get_settings.cache_clear()
    problems, samples, meta = prepare(
        [{"task_id": "mine/1", "assertions": ["assert f() == 1"]}],
        [{"task_id": "mine/1", "solution": "def f():\n    return 1\n"}],
        run="mine",
        k=[1],
    )
    get_settings.cache_clear()
    assert list(problems) == ["mine/1"] and assertions_of(problems["mine/1"]) == ["assert f() == 1"]
    assert (meta.run, meta.n_samples, samples.lines[0].task_id) == ("mine", 1, "mine/1")
    saved = Path(meta.problems)  # the objects became files in the data directory, hashed with the run
    assert saved.parent == tmp_path / "problems"
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == meta.problems_sha256
    assert Path(meta.samples_path).parent == tmp_path / "samples"


def test_a_process_sends_jobs_to_one_redis_only() -> None:
    # The Celery app that sends jobs is configured once; a second Redis would silently get none.
    script = (
        "import os\nos.environ['CODEEXEC_REDIS_URL'] = 'redis://127.0.0.1:1/0'\n"
        "import codeexec.worker.queue.celery_app\n"
        "from codeexec.producer.entry.api import connect\nfrom codeexec.producer.inputs.files import InputError\n"
        "try:\n    with connect('redis://127.0.0.1:2/0'):\n        print('connected')\n"
        "except InputError as exc:\n    print('refused:', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ}, capture_output=True, text=True)
    assert out.stdout.startswith("refused: this process sends its jobs to redis://127.0.0.1:1/0 already"), out


API_LIFECYCLE = """
import json
from codeexec.producer.entry.api import connect
from codeexec.protocol import keys

samples = [{"task_id": "HumanEval/0", "completion": "    return False"} for _ in range(5)]
with connect(REDIS_URL) as codeexec:  # no workers: the jobs stay queued
    run = codeexec.submit("humaneval", samples, run="api", priority="low")
    print("submitted", run.meta.options.priority, run.meta.status)
    run.set_priority("high")
    print("priority", run.meta.options.priority, codeexec.client.zscore(keys.ACTIVE, "api"))
    print("cancelled", run.cancel(), run.meta.status, codeexec.client.exists(keys.jobs("api")))
    print("listed", json.dumps([(r.run, r.status, r.priority) for r in codeexec.runs()]))
    print("resumed", run.resume(), run.meta.status, codeexec.client.zscore(keys.ACTIVE, "api"))
"""


def test_a_run_s_priority_cancel_and_resume_from_python(env: dict[str, str], tmp_path: Path) -> None:
    script = API_LIFECYCLE.replace("REDIS_URL", repr(env["CODEEXEC_REDIS_URL"]))
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [
        "submitted -10 queued",
        "priority 10 10.0",
        "cancelled 5 cancelled 0",
        'listed [["api", "cancelled", 10]]',
        "resumed 5 queued 10.0",
    ]
