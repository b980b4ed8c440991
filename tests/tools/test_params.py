"""Tool arguments: `ToolParams` records read like pydantic read them (lax, unknown keys ignored),
their JSON Schema as the model saw it, and a custom tool whose `Params` is still a pydantic model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
from msgspec import Meta
from pydantic import BaseModel, Field

from ctxagent.errors import ToolInputError
from ctxagent.tools.base import Tool, ToolParams, ToolResult
from ctxagent.tools.memory import MemoryTool
from ctxagent.tools.plan import validate_plan
from ctxagent.tools.terminal import TerminalTool
from ctxagent.tools.todo import TodoTool

ROOT = Path(__file__).resolve().parents[2]


class CountParams(ToolParams):
    word: Annotated[str, Meta(min_length=1, description="the word")]
    times: Annotated[int, Meta(ge=1, le=5)] = 1
    secret: Annotated[str | None, Meta(extra={"internal": True})] = None


class CountTool(Tool):
    name = "count"
    description = "Repeat a word."
    Params = CountParams

    def _run(self, params: CountParams) -> ToolResult:
        return ToolResult(True, " ".join([params.word] * params.times), params.times)


class PydanticParams(BaseModel):
    word: str = Field(min_length=1, description="the word")
    times: int = Field(1, ge=1, le=5)


class PydanticTool(CountTool):
    name = "count_pydantic"
    Params = PydanticParams


def test_arguments_are_read_lax_and_unknown_keys_are_ignored() -> None:
    assert CountTool().run({"word": "hi", "times": "3", "task_id": 7}) == 3


@pytest.mark.parametrize(("args", "words"), [
    ({}, "count: invalid arguments: word: required field missing"),
    ({"word": "hi", "times": 9}, "count: invalid arguments: times: Expected `int` <= 5"),
    ({"word": ""}, "count: invalid arguments: word: Expected `str` of length >= 1"),
])
def test_a_bad_argument_is_named(args: dict, words: str) -> None:
    with pytest.raises(ToolInputError, match=re.escape(words)):
        CountTool().run(args)
    assert words in CountTool().execute(args).content


def test_a_bad_choice_tells_the_model_the_choices(tmp_path: Path) -> None:
    result = TodoTool(workspace=tmp_path).execute({"action": "frobnicate"})
    assert not result.ok and result.content == ("todo: invalid arguments: action: Invalid enum value 'frobnicate'; use "
                                                "one of 'add', 'update', 'list', 'remove', 'clear_completed', 'set', 'write'")


def test_a_lone_surrogate_in_an_argument_is_refused_by_name(tmp_path: Path) -> None:
    for tool, args, where in [
        (MemoryTool(workspace=tmp_path, embedder=None), {"action": "add", "content": "a\ud800"}, "content"),
        (MemoryTool(workspace=tmp_path, embedder=None), {"action": "add", "content": "a", "source": "b\ud800"},
         "metadata.source"),  # a textbook extra key, kept as metadata
        (TerminalTool.for_repo(tmp_path), {"command": "echo \udfff"}, "command"),
        (TodoTool(workspace=tmp_path), {"action": "set", "items": [{"content": "\ud83d"}]}, "items.0.content"),
    ]:
        result = tool.execute(args)
        assert not result.ok and "internal error" not in result.content
        assert f"invalid arguments: {where}: " in result.content and "not valid Unicode" in result.content


def test_the_schema_has_no_titles_and_no_internal_fields() -> None:
    params = CountTool().schema()["function"]["parameters"]
    assert params == {"type": "object", "required": ["word"], "properties": {
        "word": {"type": "string", "minLength": 1, "description": "the word"},
        "times": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1}}}


def test_a_schema_is_a_fresh_copy_each_time() -> None:
    """The schema is built once per record; a caller changing its copy changes no other."""
    first = CountTool().schema()["function"]["parameters"]
    first["properties"]["word"]["description"] = "changed"
    assert CountTool().schema()["function"]["parameters"]["properties"]["word"]["description"] == "the word"


def test_a_pydantic_params_tool_still_works() -> None:
    tool = PydanticTool()
    assert tool.run({"word": "hi", "times": "2"}) == 2
    params = tool.schema()["function"]["parameters"]
    assert "title" not in params and params["required"] == ["word"]
    assert params["properties"]["times"]["maximum"] == 5
    result = tool.execute({"word": "hi", "times": 0})
    assert not result.ok and result.content.startswith("count_pydantic: invalid arguments: times: ")
    assert "greater than or equal to 1" in result.content


def test_the_custom_tool_of_the_docs_runs() -> None:
    doc = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", doc, re.DOTALL) if "class GreetTool" in b]
    exec(compile(block, "docs/tools.md", "exec", dont_inherit=True), {"__name__": "docs_tools"})


def test_enums_keep_their_order_and_nested_records_are_inlined(tmp_path: Path) -> None:
    props = TodoTool(workspace=tmp_path).schema()["function"]["parameters"]["properties"]
    assert props["action"]["enum"] == ["add", "update", "list", "remove", "clear_completed", "set", "write"]
    assert props["action"]["type"] == "string"
    item = props["items"]["anyOf"][0]["items"]
    assert item["type"] == "object" and "title" in item["properties"] and "required" not in item


def test_the_textbook_memory_call_keeps_its_extra_keys_as_metadata(tmp_path: Path) -> None:
    tool = MemoryTool(workspace=tmp_path, embedder=None)
    memory_id = tool.run({"action": "add", "content": "screenshot of the parser", "importance": "0.8",
                          "file_path": "./uploads/shot.png", "source": "upload", "page": 3})
    item = tool.store.get(memory_id)
    assert (item.importance, item.file_path, item.metadata) == (0.8, "./uploads/shot.png",
                                                                {"source": "upload", "page": 3})
    with pytest.raises(ToolInputError, match="memory: invalid arguments: importance: Expected `float` <= 1"):
        tool.run({"action": "add", "content": "x", "importance": 2, "source": "upload"})


def test_a_plan_reads_bare_risk_strings_and_ignores_the_model_s_own_keys() -> None:
    steps = [{"title": f"s{i}", "detail": "d", "validation": "v", "step": i} for i in range(5)]
    plan = validate_plan({"goal": "g", "steps": steps, "risks": ["slow", {"risk": "r", "mitigation": "m"}],
                          "summary": "extra"})
    assert [(r.risk, r.mitigation) for r in plan.risks] == [("slow", ""), ("r", "m")]
    assert plan.to_dict()["risks"][0] == {"risk": "slow", "mitigation": ""}
    with pytest.raises(ToolInputError, match=re.escape("not a valid plan: risks.0: Expected `str` of length >= 1")):
        validate_plan({"steps": steps, "risks": [""]})


def test_tool_and_batch_modules_import_no_pydantic() -> None:
    modules = [f"ctxagent.tools.{m}" for m in ("base", "terminal", "patch", "todo", "plan", "delegate", "skill",
                                                "notes", "memory", "memory_file", "context_fetch", "python_exec",
                                                "rag", "unavailable")]
    modules += ["ctxagent.batch.tasks", "ctxagent.batch.worker", "ctxagent.batch.backends.local"]
    code = f"import sys; import {', '.join(modules)}; print([m for m in sys.modules if m.startswith('pydantic')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == "[]"
