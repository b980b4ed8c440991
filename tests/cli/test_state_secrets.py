"""A key-shaped secret typed into a `notes`, `todo` or `memory` command, or read from a
file by the rag tool, never reaches the files under .ctxagent/ (found by the new-user
trial: the tool path redacted, the commands and the rag documents did not)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import invoke

KEY = "sk-test-SECRET-0123456789abcdef"


def _state_bytes(repo: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((repo / ".ctxagent").rglob("*")) if p.is_file())


def _ok(*args: str) -> str:
    result = invoke(list(args), None)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_secrets_typed_into_the_state_commands_are_stored_redacted(tmp_path: Path) -> None:
    repo = str(tmp_path)
    _ok("notes", "add", "--title", f"deploy {KEY}", "--content", f"the key is {KEY}", "--repo", repo)
    _ok("todo", "add", f"rotate {KEY}", "--repo", repo)
    _ok("memory", "add", f"prod key {KEY}", "--repo", repo)
    assert KEY.encode() not in _state_bytes(tmp_path)
    shown = _ok("notes", "list", "--repo", repo) + _ok("todo", "list", "--repo", repo) + _ok("memory", "list", "--repo", repo)
    assert KEY not in shown and "[REDACTED]" in shown


def test_a_document_with_a_secret_is_stored_redacted_by_the_rag_tool(tmp_path: Path) -> None:
    (tmp_path / "loader.py").write_text(f'API_KEY = "{KEY}"\n\ndef load_keys():\n    return API_KEY\n', encoding="utf-8")
    out = _ok("tool", "rag", json.dumps({"action": "add_document", "file_path": "loader.py"}), "--repo", str(tmp_path))
    assert KEY not in out
    assert KEY.encode() not in _state_bytes(tmp_path)
    found = _ok("tool", "rag", json.dumps({"action": "search", "query": "load_keys API_KEY"}), "--repo", str(tmp_path))
    assert "load_keys" in found and KEY not in found
