"""The tool contract: `Tool`, `ToolResult` and the `ToolRegistry`.

A tool has a `name`, a `description` and a `Params` record (`ToolParams`, its JSON Schema;
a custom tool's pydantic model still works).
`execute(args)` never raises (refusals are `ToolResult(ok=False)`); `run(args)` returns
Python data and raises `CtxAgentError`, as in the Hello-Agents textbook. docs/tools.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

from ctxagent.errors import CtxAgentError, ToolInputError
from ctxagent.validation import Invalid, Record, json_schema, validate

if TYPE_CHECKING:
    from ctxagent.config.settings import Settings, ToolSettings


@dataclass
class ToolResult:
    """What a tool call produced.

    ok: False when the call was refused or failed; `content` then says why and what to do.
    content: compact text for the model (no terminal colour codes).
    data: the Python result for library callers (None when `ok` is False).
    """

    ok: bool
    content: str
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: {"ok": bool, "content": str, "data": Any}."""
        return {"ok": self.ok, "content": self.content, "data": _jsonable(self.data)}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))


class ToolParams(Record, forbid_unknown_fields=False):
    """Base of a tool's arguments (a `Record`): keys the model sends that are no field are
    ignored, as before, e.g. a textbook call's `task_id` to the note tool."""


class Tool:
    """Base class of every tool.

    Subclasses set `name`, `description`, `Params` (a `ToolParams` record of the arguments;
    a pydantic model also works) and implement `_run(params) -> ToolResult`. Raising a
    `CtxAgentError` inside `_run` is fine: `execute` turns it into `ok=False`; `run` lets it through.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Params: ClassVar[type[Any]]
    needs_approval: ClassVar[bool] = False
    #: True for tools that keep what they are given under `.ctxagent/` (notes, todo, memory,
    #: rag, plan): the loop redacts secrets from their arguments first (`redacted_arguments`).
    writes_state: ClassVar[bool] = False

    @classmethod
    def for_repo(cls, repo: Path, settings: Settings | None = None, *, session_id: str | None = None,
                 client: Any = None) -> Tool:
        """The tool working on repository `repo` (state in `<repo>/.ctxagent/`), limits from
        `settings.tools` (None: the defaults). `session_id`: tagged on what the tool records;
        `client`: the model client for tools that ask the model. The agent and `ctxagent tool`
        open every tool this way. Raises StorageError when `<repo>/.ctxagent` is refused."""
        raise NotImplementedError(f"{cls.__name__} has no for_repo")

    def schema(self) -> dict[str, Any]:
        """The OpenAI `tools` entry: {"type": "function", "function": {name, description, parameters}}."""
        if _is_pydantic(self.Params):
            params = self.Params.model_json_schema()
            params.pop("title", None)
        else:
            params = json_schema(self.Params)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def parse(self, args: dict[str, Any] | None) -> Any:
        """`args` validated against `Params` (lax: "5" reads as 5), a `Params` instance.
        Raises ToolInputError naming the bad field (a lone surrogate in a text, too)."""
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ToolInputError(
                f"{self.name}: arguments must be a JSON object, got {type(args).__name__}"
            )
        _check_text(self.name, args, ())
        if _is_pydantic(self.Params):
            return _pydantic_parse(self.name, self.Params, args)
        try:
            return validate(self.Params, args, strict=False)
        except Invalid as exc:
            where = ".".join(str(p) for p in exc.loc) or "(arguments)"
            raise ToolInputError(f"{self.name}: invalid arguments: {where}: {exc.msg}") from None

    def execute(self, args: dict[str, Any] | None) -> ToolResult:
        """Run for the agent loop. Never raises; failures are `ok=False` results."""
        try:
            return self._run(self.parse(args))
        except CtxAgentError as exc:
            return ToolResult(ok=False, content=str(exc))
        except Exception as exc:  # a bug in a tool must not end the session
            return ToolResult(ok=False, content=f"{self.name}: internal error: {type(exc).__name__}: {exc}")

    def run(self, args: dict[str, Any] | None) -> Any:
        """Library convenience: returns `data`; raises CtxAgentError on bad input or refusal."""
        result = self._run(self.parse(args))
        if not result.ok:
            raise ToolInputError(result.content)
        return result.data

    def _run(self, params: Any) -> ToolResult:
        raise NotImplementedError


def tool_limits(settings: Settings | None) -> ToolSettings:
    """`settings.tools`, or the default `ToolSettings` when `settings` is None."""
    if settings is not None:
        return settings.tools
    from ctxagent.config.settings import ToolSettings

    return ToolSettings()


def _check_text(name: str, value: Any, loc: tuple[str | int, ...]) -> None:
    """Raises ToolInputError for a string in `value` (nested too) that is no valid Unicode (a
    lone surrogate such as "\\ud800", which JSON allows): no file, database or pipe takes it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            where = ".".join(map(str, loc)) or "(arguments)"
            raise ToolInputError(f"{name}: invalid arguments: {where}: holds characters that are not valid Unicode "
                                 "text (a lone surrogate); send the text as plain UTF-8") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(name, key, loc)
            _check_text(name, item, (*loc, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_text(name, item, (*loc, i))


def _is_pydantic(params: type) -> bool:
    """True for a pydantic model (a custom tool's); told apart without importing pydantic."""
    return hasattr(params, "model_validate") and hasattr(params, "model_json_schema")


def _pydantic_parse(name: str, params: Any, args: dict[str, Any]) -> Any:
    from pydantic import ValidationError  # only for custom tools whose Params is a pydantic model

    try:
        return params.model_validate(args)
    except ValidationError as exc:
        parts = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
            parts.append(f"{loc}: {err.get('msg', 'invalid')}")
        raise ToolInputError(f"{name}: invalid arguments: {'; '.join(parts)}") from None


@dataclass
class ToolRegistry:
    """Tools by name, in registration order. The loop looks tools up here only."""

    tools: dict[str, Tool] = field(default_factory=dict)

    def register(self, tool: Tool) -> None:
        """Add `tool`. Raises ValueError if its name is empty or already taken."""
        if not tool.name:
            raise ValueError("tool has no name")
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self.tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def names(self) -> list[str]:
        return list(self.tools)

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI `tools` list for every registered tool."""
        return [tool.schema() for tool in self.tools.values()]

    def __iter__(self) -> Iterable[Tool]:
        return iter(self.tools.values())
