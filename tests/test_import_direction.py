"""Imports run one way (docs/architecture.md): a module never imports a higher layer, and no
module reads another package's files by path. Walks every module's imports with ast,
including imports inside functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "ctxagent"

#: Layers, bottom first; names in one layer may import each other (and anything below).
LAYERS: list[set[str]] = [
    {"errors", "templates", "secret_rules", "secret_blocks", "validation"},
    {"redaction", "storage", "text"},
    {"llm", "shell", "patch", "notes", "todo", "memory", "rag", "fetch", "exec", "protocols", "harness", "mcp"},
    {"context"},
    {"config"},
    {"tools"},
    {"agent"},
    {"batch"},
    {"cli"},
    {"__main__"},
]
LEVEL = {name: i for i, names in enumerate(LAYERS) for name in names}

#: TEMPORARY, to be emptied by the engineers fixing them (issue 10): upward edges that
#: still exist. Each entry is (importing module, imported module). Do not add to it.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "ctxagent" else None


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _name(path) if path.name == "__init__.py" else _name(path).rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.append(base)
            out += [f"{base}.{alias.name}" for alias in node.names  # `from ctxagent import tools`
                    if base == "ctxagent" and ((ROOT / alias.name).is_dir() or (ROOT / f"{alias.name}.py").is_file())]
    return out


def _upward_edges() -> set[tuple[str, str]]:
    edges = set()
    for path in _modules():
        here = _name(path)
        mine = _top(here)
        if mine is None:
            continue
        for target in _imports(path):
            theirs = _top(target)
            if theirs is None or theirs == mine:
                continue
            if LEVEL[theirs] > LEVEL[mine]:
                edges.add((here, target))
    return edges


def test_every_package_has_a_layer():
    tops = {_top(_name(p)) for p in _modules()} - {None}
    assert tops <= set(LEVEL), f"give these a layer in LAYERS: {sorted(tops - set(LEVEL))}"


def test_no_import_runs_up():
    edges = _upward_edges()
    new = sorted(edges - KNOWN_UPWARD)
    assert not new, "lower layer imports a higher one (see docs/architecture.md):\n" + "\n".join(f"{a} -> {b}" for a, b in new)


def test_known_upward_list_is_not_stale():
    gone = sorted(KNOWN_UPWARD - _upward_edges())
    assert not gone, f"fixed, remove from KNOWN_UPWARD: {gone}"


_BY_PATH = re.compile(r"__file__[^\n]*(\.\.|\"\.\.\"|\.parent\.parent|parents\[)")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_reads_another_package_by_path(path):
    text = path.read_text(encoding="utf-8")
    hits = [line.strip() for line in text.splitlines() if _BY_PATH.search(line)]
    folders = {d.name for d in ROOT.iterdir() if d.is_dir() and d.name != "__pycache__"}
    own = path.relative_to(ROOT).parts[0]
    hits += [line.strip() for line in text.splitlines()
             if "__file__" in line and any(f'"{f}"' in line for f in folders - {own})]
    assert not hits, f"read files of your own package through importlib.resources / ctxagent.templates: {hits}"
