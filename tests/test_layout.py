"""One import name, and a layout that shows the architecture: the installed distribution puts only
`codeexec` on sys.path; the commands and the Python API work from a directory full of the user's own
modules with the names codeexec's parts once had; the worker's sub-packages import each other in one
direction only, the worker side never imports the producer, and the producer only the worker's entry
points; no module outside a kind's own names it; and the map (docs/architecture.md) lists every module,
as every path the docs and the code name is there."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

import codeexec
from codeexec.producer.local import resident
from codeexec.protocol.kinds import Tests
from helpers import ROOT, Worker, private_env, write_jsonl

# The user's own modules, each with a name codeexec's parts once had or Celery looks for; importing
# any of them fails loudly.
CLASHING = ["worker.py", "celery.py", "tasks.py", "producer/__init__.py"]
WAIT_S = 300.0  # for what must happen, not how fast it happens


# ---- the distribution ---------------------------------------------------------------------------------


def top_level_names() -> set[str]:
    """What the installed distribution puts on sys.path: its files' first path parts, or for an
    editable install, what lies in the folders its .pth file adds."""
    # The one pip installed (with a RECORD), not the build's codeexec.egg-info in a checkout on sys.path.
    installed = [d for d in importlib.metadata.distributions(name="codeexec") if d.read_text("RECORD")]
    assert len(installed) == 1, installed
    distribution = installed[0]
    site = Path(str(distribution.locate_file(""))).resolve()
    names: set[str] = set()
    for file in distribution.files or []:
        path = Path(str(distribution.locate_file(file))).resolve()
        if not path.is_relative_to(site):
            continue  # the console script, in the environment's bin/
        first = path.relative_to(site).parts[0]
        if first.endswith(".dist-info") or first == "__pycache__":
            continue
        if first.endswith(".pth"):
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            # An import line would run in every interpreter, every candidate's included.
            assert not [line for line in lines if line.startswith("import")], f"{first} runs code at start-up"
            names |= {entry.name for line in lines for entry in Path(line).iterdir() if entry.name != "__pycache__"}
        else:
            names.add(first.removesuffix(".py"))
    return names


def test_the_distribution_puts_only_codeexec_on_the_path() -> None:
    assert top_level_names() == {"codeexec"}


def test_the_public_api_is_importable_from_codeexec() -> None:
    for name in codeexec.__all__:
        assert getattr(codeexec, name) is not None, name
    assert set(dir(codeexec)) >= set(codeexec.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        codeexec.nothing  # noqa: B018
    # The functions a user calls, with what they return, from the one name.
    assert codeexec.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert codeexec.extract_code("```python\nx = 1\n```") == "x = 1\n"
    # A candidate in a process of its own: running one makes its host a subreaper, which would adopt
    # what later tests' processes leave.
    code = (
        "import codeexec\nresult = codeexec.run_candidate('def f():\\n    return 1\\n', ['assert f() == 1'])\n"
        "assert isinstance(result, codeexec.RunResult) and result.exit_code is codeexec.Outcome.PASS, result\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/")


def imported(statement: str) -> set[str]:
    """The codeexec modules a fresh interpreter has loaded after `statement`."""
    code = f"{statement}\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('codeexec')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    return set(out.stdout.split())


def test_importing_codeexec_loads_nothing_until_a_name_is_used() -> None:
    assert imported("import codeexec") <= {"codeexec"}


def test_the_worker_side_never_loads_the_producer() -> None:
    loaded = imported("from codeexec.worker.queue import tasks")  # everything a worker process runs
    assert "codeexec.worker.queue.tasks" in loaded
    assert not [name for name in loaded if name.startswith("codeexec.producer")]


# ---- the layout ---------------------------------------------------------------------------------------


def module_files() -> dict[str, Path]:
    """Every module of the package, by its dotted name (the root's __init__.py is codeexec)."""
    found = {"codeexec": ROOT / "__init__.py"}
    for part in ("protocol", "worker", "producer"):
        for path in sorted((ROOT / part).rglob("*.py")):
            dotted = ".".join(("codeexec", *path.relative_to(ROOT).with_suffix("").parts))
            found[dotted.removesuffix(".__init__")] = path
    return found


def for_types_only(tree: ast.AST) -> set[ast.AST]:
    """The nodes under `if TYPE_CHECKING:`: imports a type checker reads and the program never makes."""
    guarded = [
        node for node in ast.walk(tree) if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
    ]
    return {inner for node in guarded for statement in node.body for inner in ast.walk(statement)}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The codeexec modules `name` imports, at any depth of its code (a deferred import counts too; one made for
    a type checker only does not). The candidate side's modules import each other as top-level modules: they are
    loaded by path."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    typing_only = for_types_only(tree)
    for node in ast.walk(tree):
        if node in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            if package == "codeexec.worker.candidate" and f"{package}.{target}" in modules:
                target = f"{package}.{target}"
            if target in modules and target != name:
                found.add(target)
    return found


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph`, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for after in sorted(graph.get(node, ())):
            if state.get(after) == 1:
                return [*path[path.index(after) :], after]
            if after not in state and (found := visit(after)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_cycle_finds_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def package_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The modules' imports, and the worker's: by sub-package (queue, process, ...) or module."""
    modules = module_files()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}

    def part(name: str) -> str:
        return ".".join(name.split(".")[:3])  # codeexec.worker.<sub-package or module>

    worker: dict[str, set[str]] = {}
    for name, targets in graph.items():
        if name.startswith("codeexec.worker."):
            inner = {part(target) for target in targets if target.startswith("codeexec.worker.")}
            worker.setdefault(part(name), set()).update(inner - {part(name)})
    return graph, worker


def test_no_module_imports_itself_back() -> None:
    graph, _ = package_graph()
    # A module's own package (its __init__) is imported with it: not an edge of the layout.
    graph = {name: {t for t in targets if not name.startswith(f"{t}.")} for name, targets in graph.items()}
    assert cycle(graph) is None


def test_the_worker_s_parts_depend_on_each_other_one_way() -> None:
    graph, worker = package_graph()
    assert {"codeexec.worker.queue", "codeexec.worker.process", "codeexec.worker.candidate"} <= set(worker)
    assert cycle(worker) is None
    # queue -> judging -> languages -> compilers -> process -> candidate; never back down the path.
    order = [
        f"codeexec.worker.{part}" for part in ("queue", "judging", "languages", "compilers", "process", "candidate")
    ]
    for lower, higher in [(order[b], order[a]) for a in range(len(order)) for b in range(a + 1, len(order))]:
        assert higher not in worker[lower], f"{lower} imports {higher}"
    assert not [
        (name, target)
        for name, targets in graph.items()
        if name.startswith("codeexec.worker")
        for target in targets
        if target.startswith("codeexec.producer")
    ]


def worker_modules_imported(path: Path, modules: dict[str, Path]) -> set[str]:
    """The worker's modules a producer module imports: what it names (a module, or the module a name is of)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            named = {f"{node.module}.{alias.name}" for alias in node.names}
            found |= {name for name in named if name in modules} or {node.module}
    return {name for name in found if name.startswith("codeexec.worker")}


def test_the_producer_imports_only_the_worker_s_entry_points() -> None:
    """What the producer may use of the worker is listed in one place (codeexec.worker.ENTRY_POINTS); the rest
    is the worker's own, free to change."""
    from codeexec.worker import ENTRY_POINTS

    modules = module_files()
    assert set(ENTRY_POINTS) <= set(modules)
    used = {
        name: sorted(worker_modules_imported(path, modules) - set(ENTRY_POINTS))
        for name, path in modules.items()
        if name == "codeexec" or name.startswith("codeexec.producer")
    }
    assert not {name: outside for name, outside in used.items() if outside}
    every = set().union(
        *(worker_modules_imported(path, modules) for path in modules.values() if "producer" in str(path))
    )
    assert set(ENTRY_POINTS) - every - {"codeexec.worker.process.runner"} == set(), "an entry point no one uses"


def test_the_protocol_is_neither_side_s() -> None:
    """protocol/ is what the producer and the worker speak: it imports neither, and both import it."""
    graph, _ = package_graph()
    protocol = {name: targets for name, targets in graph.items() if name.startswith("codeexec.protocol")}
    assert {"codeexec.protocol.models", "codeexec.protocol.keys", "codeexec.protocol.settings"} <= set(protocol)
    assert not [
        (name, target)
        for name, targets in protocol.items()
        for target in targets
        if target.startswith(("codeexec.worker", "codeexec.producer"))
    ]
    for side in ("codeexec.worker.", "codeexec.producer."):
        assert any(t.startswith("codeexec.protocol") for n, ts in graph.items() if n.startswith(side) for t in ts)


def test_the_candidate_side_imports_only_itself_and_built_in_modules() -> None:
    modules = module_files()
    # What an interpreter has loaded when it starts; the sandbox's _ctypes, where it is on; select and
    # _socket, the init's and the zygote's, loaded where no candidate's time pays for them.
    started = subprocess.run(
        [sys.executable, "-s", "-c", "import sys; print(' '.join(sys.modules))"], capture_output=True, text=True
    )
    allowed = set(sys.builtin_module_names) | set(started.stdout.split()) | {"_ctypes", "select", "_socket"}
    # A test file's suite runs with its framework (and BigCodeBench's harness closes pyplot's figures): they
    # are imported only by the candidates that run one (testfile.py), as their own code would import them.
    allowed |= {"unittest", "pytest", "matplotlib"}
    # BigCodeBench's harness replaces subprocess's functions, as its own harness, importing it, does.
    allowed.add("subprocess")
    # And a fresh interpreter with a stack limit sets it itself (worker/process/runner.py says why).
    allowed.add("resource")
    for name, path in modules.items():
        if not name.startswith("codeexec.worker.candidate.") or name.endswith("__init__"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for imported_name in names:
                root = imported_name.partition(".")[0]
                assert root in allowed or f"codeexec.worker.candidate.{root}" in modules, (name, imported_name)


#: The modules that are a kind's own, and may name it: its model (protocol/kinds.py) and its judge
#: (worker/judging/kinds/, and the helpers judges share), the readers that build its tests from a problem set's
#: files or a service's request, and the reference's results file of its runs.
KINDS_OWN = (
    "codeexec.protocol.kinds",
    "codeexec.worker.judging.kinds.",
    "codeexec.worker.judging.helpers.",
    "codeexec.producer.inputs.",
    "codeexec.producer.service.batch",  # a batch's test sets: stdin or call-based tests
    "codeexec.producer.service.endpoints",  # a /run_code request: a script
    "codeexec.producer.results.files.",
)


def kinds_named(path: Path, models: set[str], kinds: set[str]) -> set[str]:
    """The kinds a module names: a model of one (imported or used), or a kind's name that something's `kind`
    is compared with."""
    tree = ast.parse(path.read_text())
    found = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    found |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    found &= models
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(isinstance(part, ast.Attribute) and part.attr == "kind" for part in parts):
                found |= {part.value for part in parts if isinstance(part, ast.Constant) and part.value in kinds}
    return found


def test_kinds_named_finds_models_and_comparisons(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from x import StdinTests\nif tests.kind == 'call' or other == 'stdin':\n    pass\n")
    assert kinds_named(module, {"StdinTests", "CallTests"}, {"stdin", "call"}) == {"StdinTests", "call"}


def test_no_module_outside_a_kind_s_own_names_it() -> None:
    """A kind owns every fact about itself: its model (protocol/kinds.py) and its module of worker/judging/kinds/
    say what the queue, the runner, the candidate side and the producer's reports need (the table
    worker/judging/kinds/__init__.py finds them by), and nothing else branches on which kind it has."""
    members = typing.get_args(typing.get_args(Tests)[0])
    models = {member.__name__ for member in members} | {"CaseTests"}  # stdin and call-based tests' shared fields
    kinds = {member.model_fields["kind"].default for member in members}
    assert {"AssertionTests", "StdinTests"} <= models and {"assertions", "stdin"} <= kinds
    naming = {
        name: sorted(found)
        for name, path in module_files().items()
        if not name.startswith(KINDS_OWN) and (found := kinds_named(path, models, kinds))
    }
    assert not naming


# ---- the map: docs/architecture.md ---------------------------------------------------------------------

# A line of the map's tree: its names (files, or folders ending in "/", comma-separated), then its words.
_NAME = r"(?:[\w.-]+(?:/[\w.-]+)*/|[\w-]+\.\w+)"
_MAP_LINE = re.compile(rf"^( *)({_NAME}(?:, {_NAME})*)(?: {{2,}}.*)?$")
_SOURCES = (".py", ".java", ".js", ".json")


def map_entries(text: str) -> tuple[set[str], set[str]]:
    """The files and the folders the map's tree names, each a path from the repository's root: a name is in
    the folder of the nearest line above it that is less indented and names a folder."""
    tree = re.search(r"```text\n(.*?)\n```", text, re.DOTALL)
    assert tree, "the map's tree"
    files: set[str] = set()
    folders: set[str] = set()
    open_folders: list[tuple[int, str]] = []
    for line in tree[1].splitlines():
        match = _MAP_LINE.match(line)
        if not match:
            continue  # words running on, or Redis between the two sides
        indent = len(match[1])
        while open_folders and open_folders[-1][0] >= indent:
            open_folders.pop()
        parent = open_folders[-1][1] if open_folders else ""
        for name in match[2].split(", "):
            if name.endswith("/"):
                folders.add(parent + name)
                open_folders.append((indent, parent + name))
            else:
                files.add(parent + name)
    return files, folders


def test_map_entries_nests_by_indentation() -> None:
    text = "```text\na.py      the top\nb/  a folder\n  c.py, d.js\n  e/\n    f.py  words\n"
    text += "                 g.py running on\n  h.py\ni/x/  j\n```"
    assert map_entries(text) == ({"a.py", "b/c.py", "b/d.js", "b/e/f.py", "b/h.py"}, {"b/", "b/e/", "i/x/"})


def is_only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text()).body
    return all(
        (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        or (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in body
    )


def test_the_map_lists_every_module() -> None:
    """docs/architecture.md is the map a newcomer reads first: every module of the package is on it (a
    folder's __init__.py where it holds more than a docstring), and nothing it names is gone."""
    files, folders = map_entries((ROOT / "docs" / "architecture.md").read_text())
    tree = {
        path.relative_to(ROOT).as_posix()
        for part in ("protocol", "producer", "worker")
        for path in (ROOT / part).rglob("*")
        if path.suffix in _SOURCES and "__pycache__" not in path.parts and "data" not in path.parts
    } | {"__init__.py"}
    needed = {path for path in tree if not (path.endswith("__init__.py") and is_only_a_docstring(ROOT / path))}
    assert sorted(needed - files) == [], "modules the map leaves out"
    assert sorted(files - tree) == [], "modules the map names that are not there"
    assert sorted(folder for folder in folders if not (ROOT / folder).is_dir()) == []


def test_the_map_s_kinds_are_the_kinds() -> None:
    """The map's table of the kinds of test is the table the worker finds (worker/judging/kinds/)."""
    from codeexec.worker.judging.kinds import KINDS

    text = (ROOT / "docs" / "architecture.md").read_text().split("## The kinds of test", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \|", text, re.MULTILINE)
    assert rows == [(name, kind.model.__name__) for name, kind in KINDS.items()]


# A path of this repository as the docs and the code name one: a file, or a folder ending in "/" (not another
# project's path that ends the same, sandbox/tests/...).
_PATH_NAMED = re.compile(
    r"(?<![\w/.-])((?:producer|worker|protocol|bench|tests|docs|\.ci)/(?:[\w.-]+/)*"
    r"(?:[\w-]+\.(?:py|md|java|js|json|yml|sh)\b|(?=[\s`),:;]|$)))"
)


def test_paths_named_finds_files_and_folders() -> None:
    text = "see worker/judging/ and `worker/gone/`, producer/x.py, sandbox/tests/a.py, a worker/ and tests/x/y.txt"
    assert _PATH_NAMED.findall(text) == ["worker/judging/", "worker/gone/", "producer/x.py", "worker/"]


def test_every_path_the_docs_and_the_code_name_is_there() -> None:
    """A file moved or renamed leaves no pointer to where it was: in the docs, the README, the code's
    docstrings and comments, the tests and the benchmarks."""
    texts = [*ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "Dockerfile", ROOT / "docker-compose.yml"]
    for part in ("protocol", "producer", "worker", "tests", "bench", ".ci"):
        texts += [
            path for path in (ROOT / part).rglob("*") if path.suffix in (".py", ".md", ".sh", "") and path.is_file()
        ]
    gone = {
        f"{path.relative_to(ROOT)}: {named}"
        for path in texts
        if "__pycache__" not in path.parts and path != Path(__file__)  # whose examples are made up
        for named in _PATH_NAMED.findall(path.read_text(errors="replace"))
        if not (ROOT / named).exists()
    }
    assert sorted(gone) == []


# ---- a directory full of clashing names ---------------------------------------------------------------


@pytest.fixture
def clashing(tmp_path: Path) -> Iterator[Path]:
    """A directory holding the user's own worker.py, celery.py, tasks.py and producer/ package."""
    directory = tmp_path / "mine"
    for name in CLASHING:
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"raise SystemExit('the user\\'s {name} was imported')\n")
    yield directory
    resident.stop((tmp_path / "data").resolve())


COMMAND = str(Path(sys.executable).parent / "codeexec")  # the console script, as a user runs it


def run_in(directory: Path, env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def quickstart_eval() -> list[str]:
    """The Quickstart's first command, from `codeexec eval` on."""
    text = (ROOT / "README.md").read_text().split("## Quickstart", 1)[1]
    first = re.search(r"```sh\n(.*?)\n```", text, re.DOTALL)
    assert first, "the Quickstart's first command"
    return first[1].split("&& ")[-1].split()


def test_the_quickstart_eval_works_from_a_directory_of_clashing_names(clashing: Path, tmp_path: Path) -> None:
    command = quickstart_eval()
    assert command[:2] == ["codeexec", "eval"]
    done = run_in(clashing, private_env(tmp_path / "data", keep_warm_s=0), COMMAND, *command[1:], "--json")
    report = json.loads(done.stdout)
    assert (report["n_samples"], report["pass_at_k"]["1"]) == (164, 1.0)


def test_the_api_example_works_from_a_directory_of_clashing_names(clashing: Path, tmp_path: Path) -> None:
    from test_api import api_example

    script = clashing / "example.py"  # beside the user's modules: its directory comes first on sys.path
    script.write_text(api_example())
    out = run_in(clashing, private_env(tmp_path / "data", keep_warm_s=0), sys.executable, str(script))
    assert "pass@1 0.250, 95% interval [0.000, 0.500]" in out.stdout.splitlines()


def test_a_worker_started_in_a_directory_of_clashing_names_serves(
    clashing: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    log = tmp_path / "worker.log"
    process = subprocess.Popen(
        [COMMAND, "worker", "--concurrency=1", "--hostname=mine@%h"],
        cwd=clashing,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    worker = Worker("mine", process, log)
    try:
        samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": "    return False\n"}])
        done = run_in(clashing, env, COMMAND, "eval", "--problems", "humaneval", "--samples", str(samples), "--json")
        # With a Redis URL eval starts no workers of its own: this one, the only one, ran the sample.
        assert json.loads(done.stdout)["pass_at_k"]["1"] == 0.0
        assert process.poll() is None, log.read_text()[-3000:]
    finally:
        worker.kill_whole()
