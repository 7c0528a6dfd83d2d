"""The documentation: the site under docs/ builds with `mkdocs build --strict`, the README's links lead
somewhere, and every `sh` and `python` block of the README and of the site's pages runs, page by page
in a directory of its own, on a private Valkey with real workers. A block that cannot run here says
why in an HTML comment just above it, which names the test that covers it instead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeexec.producer.local import resident
from helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"sh": ["bash", "-e", "-o", "pipefail", "-c"], "python": [sys.executable, "-c"]}
NOT_RUN = re.compile(r"<!-- not run by tests/test_docs\.py: (?P<why>.+?) -->\s*$", re.DOTALL)
WAIT_S = 600.0  # for what must happen, not how fast it happens


@dataclass
class Block:
    page: Path
    line: int
    language: str
    text: str
    not_run: str | None  # why, for a block marked so


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, with the reason above any that is not run. A fence closes at
    a line of backticks alone (backticks inside a line, such as a sample's own fence, do not)."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    start: int | None = None
    for number, line in enumerate(lines):
        if start is None and line.startswith("```"):
            start, language = number, line[3:].strip()
        elif start is not None and line.strip() == "```":
            before = "\n".join(lines[max(0, start - 4) : start])
            marked = NOT_RUN.search(before)
            text = "\n".join(lines[start + 1 : number]) + "\n"
            found.append(Block(page, start + 1, language, text, " ".join(marked["why"].split()) if marked else None))
            start = None
    assert start is None, f"{page.name}:{start}: a code fence is never closed"
    return found


def test_blocks_are_found_as_written() -> None:
    readme = blocks(ROOT / "README.md")
    assert [b.language for b in readme] == ["sh", "sh", "sh", "sh", "sh", "sh", "sh", "sh", "python"]
    assert [b.not_run is None for b in readme] == [False, False, True, True, False, False, False, False, True]
    assert readme[0].not_run and "tests/test_layout.py" in readme[0].not_run
    assert "```python" in readme[2].text  # a sample's own fence, inside a line, does not close the block


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One private Valkey for every page, and its workers, kept warm between the blocks."""
    directory = (tmp_path_factory.mktemp("docs") / "data").resolve()
    yield directory
    resident.stop(directory)


@pytest.mark.once  # the docs' text, the same under every Python (the site's build is not)
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_example_runs(page: Path, data_dir: Path, tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name != "CODEEXEC_REDIS_URL"}
    env |= {
        "CODEEXEC_DATA_DIR": str(data_dir),
        "CODEEXEC_WORKERS": "2",
        "CODEEXEC_KEEP_WARM_S": "120",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",  # the installed `codeexec`
    }
    examples = [block for block in blocks(page) if block.language in RUNNABLE]
    for block in examples:
        if block.not_run is not None:
            assert re.search(r"tests/\w+\.py|\.ci/run", block.not_run), f"{page.name}:{block.line}: names no test"
            continue
        done = subprocess.run(
            [*RUNNABLE[block.language], block.text],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert done.returncode == 0, (
            f"{page.name}:{block.line}:\n{block.text}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )


def test_the_pages_with_examples_run_some() -> None:
    ran = {
        page.name for page in PAGES for block in blocks(page) if block.language in RUNNABLE and block.not_run is None
    }
    assert {"README.md", "getting-started.md", "judging.md"} <= ran


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (tmp_path / "site" / "reference" / "index.html").read_text()
    import codeexec

    for name in codeexec.__all__:  # every public name has its entry, from its docstring
        assert f'id="codeexec.{name}"' in reference, name


@pytest.mark.once  # argparse words a usage its own way in each Python: the docs are the host's
def test_the_commands_usages_are_the_parser_s() -> None:
    """docs/commands.md opens with every command's usage as its parser gives it (producer/entry/cli.py, synopsis()):
    a flag added, renamed or dropped is said there, or this fails with what to paste."""
    from codeexec.producer.entry.cli import synopsis

    first = next(block for block in blocks(ROOT / "docs" / "commands.md") if block.language == "text")
    assert first.text == synopsis(), f"docs/commands.md's first block, as it should read:\n{synopsis()}"


def test_the_readme_s_links_lead_somewhere() -> None:
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)
    assert links
    assert [link for link in links if not (ROOT / link).exists()] == []
    assert len(text.splitlines()) <= 200
