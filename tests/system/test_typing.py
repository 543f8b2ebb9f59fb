"""The decision path is typed (docs/architecture.md, Typing): mypy's strict flags hold for the
modules pyproject.toml names, and no signature there takes or returns `Any` without a comment
saying why on the annotation's line (`# Any: ...`)."""

import ast
import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MYPY = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]

# Where the rule holds: the decision path, from the view to the plan and the aggregates.
DECISION_PATH = [
    "audit",
    "calibration",
    "bias",
    "oversight",
    "webhooks",
    "keys",
    "config/api.py",
    "config/db",
]
# mypy --strict's flags that can be set per module.
STRICT_FLAGS = {
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "disallow_untyped_decorators",
    "warn_return_any",
    "warn_unused_ignores",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
}
STRICT_MODULES = [
    "audit.*",
    "calibration.*",
    "bias.*",
    "oversight.*",
    "webhooks.*",
    "keys.*",
    "config.api",
    "config.db.*",
]
# The admin pages' ModelAdmin and ModelForm bases cannot be subscripted at run time (no
# django-stubs-ext monkeypatch): those modules may let disallow_any_generics off, and only it.
ADMIN_PAGES = {
    "audit.admin",
    "audit.admin_erasure",
    "audit.admin_retention",
    "bias.admin",
    "calibration.admin",
    "keys.admin",
    "webhooks.admin",
}


def _modules(where: str) -> list[Path]:
    path = ROOT / where
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.py") if "migrations" not in p.parts)


def _comments(source: str) -> dict[int, str]:
    return {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }


def _names_any(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.search(r"\bAny\b", node.value)
        ):
            return True
    return False


def _explained(comments: dict[int, str], lines: set[int]) -> bool:
    return any(re.search(r"#\s*Any: \S", comments.get(line, "")) for line in lines)


def unexplained_any(source: str, name: str) -> list[str]:
    """`file:line function` for each function whose signature names Any with no `# Any: <why>`
    comment, either in the comment lines right above the function (and its decorators) or on a
    line the annotation spans."""
    comments = _comments(source)
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        above = set()
        line = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        while line in comments and lines[line - 1].lstrip().startswith("#"):
            above.add(line)
            line -= 1
        arguments = node.args
        annotations = [
            a.annotation
            for a in (
                *arguments.posonlyargs,
                *arguments.args,
                *arguments.kwonlyargs,
                arguments.vararg,
                arguments.kwarg,
            )
            if a is not None and a.annotation is not None
        ]
        if node.returns is not None:
            annotations.append(node.returns)
        for annotation in annotations:
            if not _names_any(annotation):
                continue
            spans = set(range(annotation.lineno, (annotation.end_lineno or annotation.lineno) + 1))
            if not _explained(comments, above | spans):
                found.append(f"{name}:{annotation.lineno} {node.name}")
    return found


def unexplained_aliases(source: str, name: str) -> list[str]:
    """`file:line Alias` for each module-level type alias (a capitalised name bound to a type)
    that names Any with no `# Any: <why>` comment right above it or on its line: a signature
    that uses the alias inherits the reason written there."""
    comments = _comments(source)
    lines = source.splitlines()
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.TypeAlias):
            target, value = node.name, node.value
        else:
            continue
        if not isinstance(target, ast.Name) or not target.id[:1].isupper() or target.id.isupper():
            continue
        if not _names_any(value):
            continue
        above = set()
        line = node.lineno - 1
        while line in comments and lines[line - 1].lstrip().startswith("#"):
            above.add(line)
            line -= 1
        if not _explained(comments, above | set(range(node.lineno, (node.end_lineno or node.lineno) + 1))):
            found.append(f"{name}:{node.lineno} {target.id}")
    return found


@pytest.mark.parametrize("where", DECISION_PATH)
def test_no_type_alias_on_the_decision_path_hides_an_unexplained_any(where: str):
    found = [
        problem
        for path in _modules(where)
        for problem in unexplained_aliases(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert found == [], "a type alias that names Any needs a `# Any: <why>` comment above or beside it"


def test_an_alias_that_names_any_is_found_unless_explained():
    source = (
        "from typing import Any\n"
        "Row = dict[str, Any]\n"
        "# Any: JSON by name\n"
        "Doc = dict[str, Any]\n"
        "LIMIT = 3\n"
        "Rows = list[int]\n"
    )
    assert unexplained_aliases(source, "m.py") == ["m.py:2 Row"]


@pytest.mark.parametrize("where", DECISION_PATH)
def test_no_signature_on_the_decision_path_takes_any_without_saying_why(where: str):
    found = [
        problem
        for path in _modules(where)
        for problem in unexplained_any(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert found == [], "an Any in a signature needs a `# Any: <why>` comment above or beside it"


def test_an_unexplained_any_is_found_and_an_explained_one_is_not():
    source = (
        "from typing import Any\n"
        "def a(x: Any) -> None: ...\n"
        "def b(x: dict[str, Any]) -> None: ...  # Any: a JSON object, not yet validated\n"
        "def c(\n    x: int,\n) -> 'list[Any]': ...\n"
        "def d(x: int) -> int: ...\n"
        "# Any: figures by name\n"
        "@decorated\n"
        "def e(x: int) -> dict[str, Any]: ...\n"
        "# Any: this comment is not right above f\n"
        "\n"
        "def f(x: int) -> dict[str, Any]: ...\n"
    )
    assert unexplained_any(source, "m.py") == ["m.py:2 a", "m.py:6 c", "m.py:13 f"]


def _listed(override: dict) -> list[str]:
    return [override["module"]] if isinstance(override["module"], str) else override["module"]


def test_the_decision_path_is_under_mypys_strict_flags():
    overrides = MYPY.get("overrides", [])
    strict = [o for o in overrides if {k for k, v in o.items() if v is True} >= STRICT_FLAGS]
    assert set(STRICT_MODULES) <= {module for o in strict for module in _listed(o)}
    relaxed = {
        (module, flag)
        for o in overrides
        for flag in STRICT_FLAGS
        if o.get(flag) is False
        for module in _listed(o)
    }
    # Celery's task decorators are untyped: an app's tasks module may let that one flag off.
    tasks = {module for module, _ in relaxed if module.endswith(".tasks") and module.count(".") == 1}
    allowed = {(module, "disallow_untyped_decorators") for module in tasks}
    allowed |= {(module, "disallow_any_generics") for module in ADMIN_PAGES}
    assert relaxed <= allowed
