"""`ctxagent memory ...`: the memory tool's actions for people, through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ctxagent.cli.main import run_cli


def _ctx(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = run_cli(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


def _add(repo: Path, text: str, *extra: str) -> str:
    code, out, err = _ctx("memory", "add", text, "--repo", str(repo), "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_add_search_stats_summary_in_json_and_tables(tmp_path: Path) -> None:
    memory_id = _add(tmp_path, "Pandas内存优化", "--type", "semantic", "--importance", "0.8")
    _add(tmp_path, "Li Si is a frontend engineer")
    code, out, _ = _ctx("memory", "search", "如何优化Pandas的内存占用?", "--repo", str(tmp_path), "--json")
    assert code == 0 and json.loads(out)[0]["id"] == memory_id
    code, out, _ = _ctx("memory", "search", "frontend", "--repo", str(tmp_path))
    assert code == 0 and "frontend" in out and "score" in out
    code, out, _ = _ctx("memory", "stats", "--repo", str(tmp_path), "--json")
    assert json.loads(out)["total_memories"] == 2
    code, out, _ = _ctx("memory", "stats", "--repo", str(tmp_path))
    assert code == 0 and "semantic" in out and "2 memories" in out
    code, out, _ = _ctx("memory", "summary", "--repo", str(tmp_path))
    assert code == 0 and "most important" in out
    code, out, _ = _ctx("memory", "list", "--repo", str(tmp_path), "--json")
    assert [r["content"] for r in json.loads(out)] == ["Pandas内存优化", "Li Si is a frontend engineer"]


def test_update_rm_forget_consolidate_clear(tmp_path: Path) -> None:
    memory_id = _add(tmp_path, "draft decision", "--importance", "0.9")
    low = _add(tmp_path, "noise", "--importance", "0.05")
    code, out, _ = _ctx("memory", "update", memory_id[:8], "--text", "final decision", "--repo", str(tmp_path))
    assert code == 0 and "final decision" in out
    code, out, _ = _ctx("memory", "forget", "--repo", str(tmp_path))
    assert code == 0 and "forgot 1 memories" in out
    code, out, _ = _ctx("memory", "rm", low, "--repo", str(tmp_path))
    assert code == 1
    code, out, _ = _ctx("memory", "consolidate", "--repo", str(tmp_path), "--json")
    assert json.loads(out)["ids"] == [memory_id]
    code, out, err = _ctx("memory", "clear", "--repo", str(tmp_path))
    assert code == 1 and "--yes" in err
    code, out, _ = _ctx("memory", "clear", "--yes", "--repo", str(tmp_path))
    assert code == 0 and "cleared 1" in out
    code, out, _ = _ctx("memory", "forget", "--strategy", "capacity_based", "--max-capacity", "0",
                        "--repo", str(tmp_path), "--json")
    assert json.loads(out) == {"strategy": "capacity_based", "forgotten": 0, "remaining": 0}


def test_errors_are_one_line_not_tracebacks(tmp_path: Path) -> None:
    code, _, err = _ctx("memory", "rm", "../../etc/passwd", "--repo", str(tmp_path))
    assert code == 1 and err.startswith("error: no memory") and "Traceback" not in err
    code, _, err = _ctx("memory", "add", "x", "--importance", "2", "--repo", str(tmp_path))
    assert code == 2 and "Traceback" not in err
