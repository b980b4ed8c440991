"""The one tool contract: every tool in TOOLS opens with `for_repo(repo, settings)` on the
repository's own state; the textbook constructors keep their meaning of `workspace`;
every exported name imports (PythonExecTool was once exported without a module)."""

from __future__ import annotations

import importlib

import pytest

import ctxagent.tools
from ctxagent.config.settings import Settings, ToolSettings
from ctxagent.tools import TOOLS, Tool, tool_class


@pytest.mark.parametrize("name", list(ctxagent.tools.__all__))
def test_every_exported_name_imports(name) -> None:
    assert getattr(importlib.import_module("ctxagent.tools"), name) is not None


def test_python_exec_is_exported_now_that_it_exists() -> None:
    assert "PythonExecTool" in ctxagent.tools.__all__
    assert ctxagent.tools.PythonExecTool.name == "python_exec"


@pytest.mark.parametrize("name", list(TOOLS))
def test_for_repo_opens_every_tool_under_its_name(tmp_path, name) -> None:
    tool = tool_class(name).for_repo(tmp_path, None)
    assert isinstance(tool, Tool) and tool.name == name
    assert tool_class(name).__name__ in ctxagent.tools.__all__


def test_for_repo_takes_the_limits_from_settings(tmp_path) -> None:
    settings = Settings(model={"model": "m"}, tools=ToolSettings(terminal_timeout_s=7, patch_max_files=3))
    assert tool_class("terminal").for_repo(tmp_path, settings).timeout == 7
    assert tool_class("apply_patch").for_repo(tmp_path, settings).limits.max_files == 3
    assert tool_class("terminal").for_repo(tmp_path).timeout == ToolSettings().terminal_timeout_s


def test_state_tools_from_for_repo_share_the_repository_board(tmp_path) -> None:
    tool_class("todo").for_repo(tmp_path).run({"action": "add", "content": "step one"})
    plan = tool_class("plan").for_repo(tmp_path)
    assert plan.board.path == tmp_path / ".ctxagent" / "todos.json"
    assert [i.content for i in plan.board.items()] == ["step one"]


def test_textbook_constructors_keep_their_workspace(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    from ctxagent.tools import ContextFetchTool, NoteTool, PlanTool, TerminalTool, TodoTool

    NoteTool(workspace="./notes").run({"action": "create", "title": "t", "content": "c"})
    assert list((tmp_path / "notes").glob("*.md")), "NoteTool's workspace is the notes folder"
    assert TerminalTool(workspace=".").workspace == tmp_path.resolve(), "TerminalTool's is the repository"
    TodoTool(workspace=".").run({"action": "add", "content": "x"})
    assert (tmp_path / ".ctxagent" / "todos.json").is_file(), "TodoTool(workspace=.) is that repo's board"
    assert TodoTool(tmp_path / "board.json").board.path == tmp_path / "board.json"
    assert PlanTool(workspace=".").board.path.resolve() == (tmp_path / ".ctxagent" / "todos.json").resolve()
    assert ContextFetchTool(workspace=".").run({"query": "nothing_here_zz", "sources": ["files"]})["query"]
