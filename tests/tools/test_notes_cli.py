"""`ctxagent notes ...`: the same actions as the note tool, rendered for people or as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import Out  # noqa: F401
from tests.support.cli import invoke as _invoke


def _ctx(*args: str, input: str | None = None) -> Out:
    return _invoke(list(args), input)


def _add(repo: Path, title: str, *extra: str) -> str:
    result = _ctx("notes", "add", "--title", title, "--repo", str(repo), "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_add_list_show_search_edit_rm(tmp_path: Path) -> None:
    note_id = _add(tmp_path, "Governance: Manifest-Diff Prompt", "--type", "blocker", "--tags", "gov,prompt",
                   "--content", "The **diff** must be shown.")
    assert (tmp_path / ".ctxagent" / "notes" / f"{note_id}.md").exists()

    listing = _ctx("notes", "list", "--repo", str(tmp_path))
    assert listing.exit_code == 0 and note_id in listing.stdout and "blocker" in listing.stdout

    shown = _ctx("notes", "show", note_id, "--repo", str(tmp_path))
    assert "Governance: Manifest-Diff Prompt" in shown.stdout and "diff" in shown.stdout

    hits = json.loads(_ctx("notes", "search", "manifest diff", "--repo", str(tmp_path), "--json").stdout)
    assert hits[0]["note_id"] == note_id and hits[0]["score"] == 1.0

    edited = _ctx("notes", "edit", note_id, "--type", "conclusion", "--content", "-", "--repo", str(tmp_path),
                  "--json", input="from stdin\n")
    assert json.loads(edited.stdout)["metadata"]["type"] == "conclusion"
    assert json.loads(edited.stdout)["content"] == "from stdin"

    summary = json.loads(_ctx("notes", "summary", "--repo", str(tmp_path), "--json").stdout)
    assert summary["type_distribution"] == {"conclusion": 1}

    removed = _ctx("notes", "rm", note_id, "--repo", str(tmp_path))
    assert removed.exit_code == 0 and f"deleted {note_id}" in removed.stdout
    assert json.loads(_ctx("notes", "list", "--repo", str(tmp_path), "--json").stdout) == []


def test_list_filters_and_empty_output(tmp_path: Path) -> None:
    assert "no notes" in _ctx("notes", "list", "--repo", str(tmp_path)).stdout
    _add(tmp_path, "a", "--type", "action", "--tags", "x")
    _add(tmp_path, "b", "--type", "blocker")
    rows = json.loads(_ctx("notes", "list", "--type", "action", "--repo", str(tmp_path), "--json").stdout)
    assert [r["title"] for r in rows] == ["a"]
    rows = json.loads(_ctx("notes", "list", "--tag", "x", "--repo", str(tmp_path), "--json").stdout)
    assert [r["title"] for r in rows] == ["a"]


def test_errors_exit_1_with_a_message(tmp_path: Path) -> None:
    bad = _ctx("notes", "show", "../../etc/passwd", "--repo", str(tmp_path))
    assert bad.exit_code == 1 and "invalid note_id" in bad.output
    missing = _ctx("notes", "rm", "note_20990101_000000_abcdef", "--repo", str(tmp_path))
    assert missing.exit_code == 1 and "does not exist" in missing.output
    wrong_type = _ctx("notes", "add", "--title", "t", "--type", "idea", "--repo", str(tmp_path))
    assert wrong_type.exit_code == 2 and "task_state" in wrong_type.output


def test_rebuilt_index_warning_is_shown(tmp_path: Path) -> None:
    _add(tmp_path, "kept")
    (tmp_path / ".ctxagent" / "notes" / "notes_index.json").write_text("{", encoding="utf-8")
    (tmp_path / ".ctxagent" / "notes" / "notes_index.json.bak").unlink(missing_ok=True)
    result = _ctx("notes", "list", "--repo", str(tmp_path))
    assert result.exit_code == 0 and "kept" in result.stdout
    assert "warning:" in result.stderr and "rebuilt" in result.stderr
