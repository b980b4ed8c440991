"""Docstrings stay short (README, "How we write code"): a module's at most 8 lines, a public
function's or class's at most 5. The story of a subsystem goes in docs/<subsystem>.md."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "ctxagent"
MODULE_MAX_LINES = 8
PUBLIC_MAX_LINES = 5


def _lines(doc: str | None) -> int:
    return len(doc.strip().splitlines()) if doc else 0


def _public_definitions(tree: ast.Module):
    """Yield (dotted name, node) for every public function and class, methods of public classes included."""
    stack = [("", node) for node in tree.body]
    while stack:
        prefix, node = stack.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        yield prefix + node.name, node
        if isinstance(node, ast.ClassDef):
            stack.extend((f"{prefix}{node.name}.", child) for child in node.body)


def long_docstrings(source: str) -> list[str]:
    """The docstrings of `source` that are too long, as "name: N lines" (the module is "<module>")."""
    tree = ast.parse(source)
    found = []
    if (n := _lines(ast.get_docstring(tree, clean=False))) > MODULE_MAX_LINES:
        found.append(f"<module>: {n} lines (max {MODULE_MAX_LINES})")
    for name, node in _public_definitions(tree):
        if (n := _lines(ast.get_docstring(node))) > PUBLIC_MAX_LINES:
            found.append(f"{name}: {n} lines (max {PUBLIC_MAX_LINES})")
    return found


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_package_has_modules_to_check():
    assert len(_modules()) > 100


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_docstrings_are_short(path: Path):
    found = long_docstrings(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(REPO)}: move the narrative to docs/<subsystem>.md: " + "; ".join(found)


def test_the_check_finds_long_docstrings():
    module_doc = '"""' + "\n".join(f"line {i}" for i in range(9)) + '\n"""\n'
    body = '"""' + "\n".join(f"line {i}" for i in range(6)) + '"""'
    source = (
        module_doc
        + f"def public():\n    {body}\n"
        + f"def _private():\n    {body}\n"
        + f"class Public:\n    def method(self):\n        {body}\n    def _hidden(self):\n        {body}\n"
        + f"class _Private:\n    def method(self):\n        {body}\n"
    )
    assert sorted(long_docstrings(source)) == [
        "<module>: 9 lines (max 8)",
        "Public.method: 6 lines (max 5)",
        "public: 6 lines (max 5)",
    ]


def test_short_docstrings_pass():
    source = '"""One line.\n\nThree more.\n"""\n\ndef f():\n    """Five\n    lines\n    at\n    most\n    here."""\n'
    assert long_docstrings(source) == []
