"""`plan`: ask the model for an executable plan (5 to 12 steps, risks, validation).

Prompt `prompts/plan.md`; the JSON reply is validated (`Plan`), retried once with the
error (`plan_retry.md`), then an LLMError. `run` returns {goal, steps, risks, markdown}
(+ `todo_ids` with `load_to_todo`; the text result then ends with the board). Any
`chat(messages, tools=None)` client serves (docs/notes-todo-plan.md, "Plans").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from msgspec import Meta

from ctxagent.errors import ConfigError, LLMError, ToolInputError
from ctxagent.templates import render
from ctxagent.todo.board import TodoBoard
from ctxagent.tools.base import Tool, ToolParams, ToolResult
from ctxagent.tools.todo import board_path, render_board
from ctxagent.validation import Invalid, validate

#: Step bounds from issue 3 ("an executable plan of 5 to 12 steps").
MIN_STEPS = 5
MAX_STEPS = 12


class ChatClient(Protocol):
    """What PlanTool needs from a model client."""

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Any:
        """Send OpenAI chat `messages`; return a reply whose `.content` is the text."""


_Text = Annotated[str, Meta(min_length=1)]


class PlanStep(ToolParams):
    """One step: what to do, how, and how to check it worked."""

    title: _Text
    detail: _Text
    validation: _Text


class PlanRisk(ToolParams):
    """A risk and how to prevent or detect it (a bare string is read as the risk)."""

    risk: _Text
    mitigation: str = ""


class Plan(ToolParams, kw_only=True):
    """A validated plan: MIN_STEPS to MAX_STEPS steps and at least one risk (a bare string
    among `risks` becomes a PlanRisk). Keys of the model's own are ignored."""

    goal: str = ""
    steps: Annotated[list[PlanStep], Meta(min_length=MIN_STEPS, max_length=MAX_STEPS)]
    risks: Annotated[list[PlanRisk | _Text], Meta(min_length=1)]

    def __post_init__(self) -> None:
        self.risks = [PlanRisk(risk=r) if isinstance(r, str) else r for r in self.risks]


class PlanParams(ToolParams):
    """Arguments of the `plan` tool."""

    action: Annotated[Literal["plan", "load_to_todo"], Meta(
        description="plan: ask for a plan; load_to_todo: put a given plan's steps on the board")] = "plan"
    goal: Annotated[str | None, Meta(description="what the plan must achieve (plan)")] = None
    constraints: Annotated[list[str] | str | None, Meta(description="rules the plan must respect (plan)")] = None
    format: Annotated[Literal["markdown", "json"], Meta(description="how to show the plan")] = "markdown"
    load_to_todo: Annotated[bool, Meta(description="also put the steps on the todo board (plan)")] = False
    plan: Annotated[dict[str, Any] | None, Meta(description="a plan returned earlier (load_to_todo)")] = None


#: What `plan` says when it has no model to ask (e.g. `ctxagent tool plan` with no model configured).
NO_MODEL = ("the plan tool needs a model to ask and none is configured here: set one with "
            "CTXAGENT_BASE_URL, CTXAGENT_MODEL and CTXAGENT_API_KEY, or a [model] table in "
            "~/.config/ctxagent/config.toml (docs/configuration.md; `ctxagent doctor` checks it), then "
            "ask for a plan inside `ctxagent run` or `ctxagent chat`. `load_to_todo` with a plan works "
            "without a model; from Python, pass the client: PlanTool(client).")


class PlanTool(Tool):
    """Plans with `client`; loads steps onto `board` (a TodoBoard, or anything with `.board`),
    else onto the board of repository `workspace` when given (`<workspace>/.ctxagent/todos.json`)."""

    name = "plan"
    description = (
        "Draft an executable step-by-step plan (5-12 steps, each with a validation, plus risks) "
        "for a goal before starting a larger change; optionally load the steps onto the todo board."
    )
    Params = PlanParams
    writes_state = True

    def __init__(self, client: ChatClient | None = None, *, board: Any = None,
                 workspace: str | Path | None = None) -> None:
        if board is None and workspace is not None:
            board = TodoBoard(board_path(workspace))
        self.client = client
        self.board: TodoBoard | None = getattr(board, "board", board)

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> PlanTool:
        """Plans with `client` (None: asking is refused, loading a plan works) onto `repo`'s todo board."""
        return cls(client, workspace=repo)

    def _run(self, params: PlanParams) -> ToolResult:
        if params.action == "load_to_todo":
            plan = validate_plan(params.plan)
            return self._answer(plan, params.format, load=True)
        if not params.goal or not params.goal.strip():
            raise ToolInputError("plan needs a goal: say what the plan must achieve")
        plan = self.make_plan(params.goal.strip(), _constraints(params.constraints))
        return self._answer(plan, params.format, load=params.load_to_todo)

    def make_plan(self, goal: str, constraints: list[str]) -> Plan:
        """Ask the model for a plan; one retry on an invalid reply. Raises LLMError, ConfigError."""
        if self.client is None:
            raise ConfigError(NO_MODEL)
        bounds = {"min_steps": MIN_STEPS, "max_steps": MAX_STEPS}
        messages = [{"role": "user", "content": render("ctxagent.tools", "plan", goal=goal, constraints=constraints, **bounds)}]
        text = self._ask(messages)
        try:
            plan = parse_plan(text)
        except PlanFormatError as exc:
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": render("ctxagent.tools", "plan_retry", error=str(exc), **bounds)}]
            try:
                plan = parse_plan(self._ask(messages))
            except PlanFormatError as again:
                raise LLMError(f"the model did not return a valid plan after 2 attempts: {again}. "
                               "Try again, rephrase the goal, or use a stronger model.") from None
        plan.goal = plan.goal or goal
        return plan

    def _ask(self, messages: list[dict[str, Any]]) -> str:
        reply = self.client.chat(list(messages), tools=None)  # type: ignore[union-attr]
        return getattr(reply, "content", None) or ""

    def _answer(self, plan: Plan, fmt: str, *, load: bool) -> ToolResult:
        data: dict[str, Any] = {**plan.to_dict(), "markdown": plan_markdown(plan)}
        text = data["markdown"] if fmt == "markdown" else json.dumps(plan.to_dict(), ensure_ascii=False, indent=2)
        if load:
            ids = self._load(plan)
            data["todo_ids"] = ids
            text += (f"\n\nLoaded {len(ids)} steps onto the todo board as items {ids[0]}-{ids[-1]}.\n"
                     + render_board(self.board.items()))  # type: ignore[union-attr]
        return ToolResult(True, text, data)

    def _load(self, plan: Plan) -> list[int]:
        if self.board is None:
            raise ConfigError("the plan tool has no todo board; construct PlanTool(client, board=...)")
        items = self.board.add_many([{"content": step.title} for step in plan.steps])
        return [item.id for item in items]


class PlanFormatError(ValueError):
    """The model's reply is not a valid plan (message says why, for the retry)."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_plan(text: str) -> Plan:
    """The Plan in a model reply (a JSON object, possibly fenced). Raises PlanFormatError."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise PlanFormatError("the reply holds no JSON object")
    try:
        value = json.loads(body[start : end + 1])
    except ValueError as exc:
        raise PlanFormatError(f"the JSON does not parse ({exc})") from None
    try:
        return validate(Plan, value, strict=False)
    except Invalid as exc:
        raise PlanFormatError(describe(exc)) from None


def validate_plan(value: Any) -> Plan:
    """A plan given by a caller (load_to_todo), validated. Raises ToolInputError."""
    if not isinstance(value, dict):
        raise ToolInputError("load_to_todo needs `plan`: the plan object returned by the plan action")
    try:
        return validate(Plan, value, strict=False)
    except Invalid as exc:
        raise ToolInputError(f"not a valid plan: {describe(exc)}") from None


def describe(exc: Invalid) -> str:
    """A plan's validation error as `field.path: message` ("(plan)" for the whole object)."""
    return f"{'.'.join(str(p) for p in exc.loc) or '(plan)'}: {exc.msg}"


def _constraints(value: list[str] | str | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    return [c.strip() for c in items if c and c.strip()]


def plan_markdown(plan: Plan) -> str:
    """The plan as Markdown: a heading, numbered steps with detail and validation, risks."""
    lines = [f"# Plan: {plan.goal}", ""]
    for n, step in enumerate(plan.steps, 1):
        lines += [f"{n}. **{step.title}**: {step.detail}", f"   - Validation: {step.validation}"]
    lines += ["", "## Risks"]
    for risk in plan.risks:
        lines.append(f"- {risk.risk}" + (f" (mitigation: {risk.mitigation})" if risk.mitigation else ""))
    return "\n".join(lines)
