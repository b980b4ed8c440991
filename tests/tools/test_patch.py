"""ApplyPatchTool: the model-facing contract of `apply_patch`."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ctxagent.errors import PatchError, ToolInputError
from ctxagent.tools import ApplyPatchTool, ToolRegistry


def P(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def f():\n    return 1\n")
    return root


def test_contract(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    schema = tool.schema()["function"]
    assert tool.name == "apply_patch" and tool.needs_approval is True
    assert schema["parameters"]["required"] == ["patch"]
    assert "*** Begin Patch" in schema["description"] and "*** Update File:" in schema["description"]
    registry = ToolRegistry()
    registry.register(tool)
    assert registry.names() == ["apply_patch"]


def test_preview_is_the_plain_diff_and_writes_nothing(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    diff = tool.preview({"patch": P("*** Update File: app.py\n@@\n def f():\n-    return 1\n+    return 2\n")})
    assert "-    return 1\n+    return 2\n" in diff and "\x1b[" not in diff
    assert (ws / "app.py").read_text() == "def f():\n    return 1\n"
    assert not (ws / ".ctxagent").exists()


def test_preview_raises_for_a_patch_that_does_not_parse_or_locate(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    with pytest.raises(PatchError, match="no operation"):
        tool.preview({"patch": "*** Begin Patch\n*** End Patch"})
    with pytest.raises(PatchError, match="not found in app.py"):
        tool.preview({"patch": P("*** Update File: app.py\n@@\n-nope\n+x\n")})
    with pytest.raises(ToolInputError):
        tool.preview({"text": "wrong key"})


def test_execute_applies_and_reports_files_and_checkpoint(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    result = tool.execute({"patch": P(
        "*** Update File: app.py\n@@\n def f():\n-    return 1\n+    return 2\n"
        "*** Add File: docs/readme.md\n+# hi\n"
    )})
    assert result.ok, result.content
    assert result.data["files"] == [
        {"path": "app.py", "action": "update", "added": 1, "removed": 1},
        {"path": "docs/readme.md", "action": "add", "added": 1, "removed": 0},
    ]
    assert result.data["checkpoint"] == 1  # recorded before the write: /undo restores it
    assert not (ws / ".ctxagent" / "backups").exists()
    assert result.content.splitlines()[:3] == [
        "Patch applied (2 files):", "M app.py (+1 -1)", "A docs/readme.md (+1 -0)"]
    assert (ws / "app.py").read_text() == "def f():\n    return 2\n"


def test_execute_failure_is_a_result_with_the_reason(ws: Path) -> None:
    result = ApplyPatchTool(workspace=ws).execute({"patch": P("*** Update File: app.py\n@@\n-    return 9\n+x\n")})
    assert result.ok is False and result.data is None
    assert "hunk 1 was not found in app.py" in result.content and "2 |     return 1" in result.content


def test_execute_refuses_escapes_and_git(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    for body in ("*** Add File: ../x.txt\n+x\n", "*** Add File: .git/config\n+x\n"):
        result = tool.execute({"patch": P(body)})
        assert result.ok is False and "refused path" in result.content
    assert sorted(p.name for p in ws.iterdir()) == ["app.py"]


def test_run_returns_data_and_raises_on_error(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws, checkpoint=False)
    data = tool.run({"patch": P("*** Delete File: app.py\n")})
    assert data == {"files": [{"path": "app.py", "action": "delete", "added": 0, "removed": 2}], "checkpoint": None}
    with pytest.raises(PatchError):
        tool.run({"patch": P("*** Delete File: app.py\n")})


def test_limits_are_configurable(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws, max_files=1, max_changed_lines=3)
    two = tool.execute({"patch": P("*** Add File: a\n+1\n*** Add File: b\n+2\n")})
    assert not two.ok and "limit of 1" in two.content
    big = tool.execute({"patch": P("*** Add File: a\n+1\n+2\n+3\n+4\n")})
    assert not big.ok and "limit of 3" in big.content


def test_permission_bits_survive(ws: Path) -> None:
    (ws / "app.py").chmod(0o755)
    assert ApplyPatchTool(workspace=ws).execute(
        {"patch": P("*** Update File: app.py\n@@\n-    return 1\n+    return 3\n")}).ok
    assert stat.S_IMODE((ws / "app.py").stat().st_mode) == 0o755


def test_the_patch_written_is_the_one_previewed_and_a_file_changed_meanwhile_is_refused(ws: Path) -> None:
    """Issue 10: planned once. The file changes while the approval prompt waits: refused,
    nothing written, the hand edit kept."""
    tool = ApplyPatchTool(workspace=ws)
    args = {"patch": P("*** Update File: app.py\n@@\n def f():\n-    return 1\n+    return 2\n")}
    assert "+    return 2" in tool.preview(args)
    (ws / "app.py").write_text("def f():\n    return 1\n# edited by hand while the prompt waited\n")
    result = tool.execute(args)
    assert not result.ok
    assert (ws / "app.py").read_text() == "def f():\n    return 1\n# edited by hand while the prompt waited\n"


def test_the_previewed_plan_is_applied_when_nothing_changed(ws: Path) -> None:
    tool = ApplyPatchTool(workspace=ws)
    args = {"patch": P("*** Update File: app.py\n@@\n def f():\n-    return 1\n+    return 2\n")}
    tool.preview(args)
    assert tool.execute(args).ok
    assert (ws / "app.py").read_text() == "def f():\n    return 2\n"
