"""docs/architecture.md walks one POST /log through the code, each step as `file:line` and the
name defined there. A step whose function moved, was renamed or was removed fails here, so the
walk a newcomer follows stays true (the page's section "One POST /log, from the view to the
commit")."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
# A step of the walk's table: | n | `path/to/file.py:LINE` `Name` or `Class.method` | ...
STEP = re.compile(r"^\|[^|]*\| `([\w/]+\.py):(\d+)` `([\w.]+)`", re.MULTILINE)


def _definitions(path: Path) -> dict[str, int]:
    """Every function, class and method of the module (`Class.method`) and module-level name,
    with the line it is defined on."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                found[name] = child.lineno
                visit(child, f"{name}.")
            elif isinstance(child, ast.Assign | ast.AnnAssign) and not prefix:
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = child.lineno

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _steps() -> list[tuple[str, int, str]]:
    section = ARCHITECTURE.split("<!-- walk -->", 1)[1].split("<!-- /walk -->", 1)[0]
    return [(path, int(line), name) for path, line, name in STEP.findall(section)]


def test_the_walk_has_the_steps_of_a_request_from_view_to_commit():
    names = [name for _, _, name in _steps()]
    assert len(names) >= 8, names
    assert {"LogView.post", "item_validated", "plan_items", "plan_apply"} <= set(names), names


def test_every_step_of_the_walk_names_a_definition_at_its_line():
    wrong = []
    for path, line, name in _steps():
        file = ROOT / path
        if not file.exists():
            wrong.append(f"{path} does not exist")
            continue
        defined = _definitions(file).get(name)
        if defined != line:
            wrong.append(f"{path}:{line} `{name}`: defined at line {defined}")
    assert wrong == [], "docs/architecture.md's walk of POST /log is out of date: " + "; ".join(wrong)


def test_the_two_newcomer_documents_stay_short():
    """A newcomer reads docs/architecture.md and bench/README.md in an hour: at most 300 and 200
    lines (the README's contributing notes)."""
    bench = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    assert len(ARCHITECTURE.splitlines()) <= 300
    assert len(bench.splitlines()) <= 200
