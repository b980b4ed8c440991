"""`TextProtocol`: what the XML and ReAct protocols share, the history written as text.

`encode` drops the `tools` parameter: the tool guide goes into the first system message,
calls become action text, one assistant message's results one user message after
OBSERVATION_PREFIX, adjacent user messages joined; input never modified (docs/protocols.md).
"""

from __future__ import annotations

from typing import Any

from ctxagent.protocols.base import OBSERVATION_PREFIX, PROTOCOL_ERROR, Decoded
from ctxagent.protocols.guide import tool_entries
from ctxagent.templates import prompts

_PROMPTS = prompts("ctxagent.protocols")


class TextProtocol:
    """Base of the text protocols; subclasses set `name` and implement `render_action`,
    `render_finish` and `decode`. Their prompt files: `<name>.md` (the guide) and
    `<name>_form.md` (the expected form, in the guide and in every correction)."""

    name = "text"
    native = False

    def encode(self, messages: list[dict], tools: list[dict]) -> tuple[list[dict], list[dict] | None]:
        """(messages as text, None): see the module doc."""
        out: list[dict] = []
        pending: list[str] = []
        guide = self.guide(tools)
        for message in messages:
            role = message.get("role")
            if role == "tool":
                pending.append(self._observation(message, messages))
                continue
            if pending:
                _add_user(out, "\n\n".join(pending))
                pending = []
            if role in ("system", "developer") and guide is not None:
                out.append({**message, "content": f"{_text(message)}\n\n{guide}".strip()})
                guide = None
            elif role == "assistant":
                out.append(self._assistant(message, tools))
            elif role == "user":
                _add_user(out, message)
            else:
                out.append(message)
        if pending:
            _add_user(out, "\n\n".join(pending))
        if guide is not None:
            out.insert(0, {"role": "system", "content": guide})
        return out, None

    def guide(self, tools: list[dict]) -> str:
        """The tool guide for the system prompt: the protocol's rules and every tool."""
        return _PROMPTS.render(self.name, tools=tool_entries(tools), form=self.form(tools),
                               names=[t["name"] for t in tool_entries(tools)])

    def form(self, tools: list[dict]) -> str:
        """The expected form of a reply (the `<name>_form.md` prompt)."""
        names = [t["name"] for t in tool_entries(tools)]
        return _PROMPTS.render(f"{self.name}_form", names=names)

    def correction(self, problem: str, tools: list[dict]) -> str:
        """What the model is told after a reply that broke the protocol (`correction.md`)."""
        return _PROMPTS.render("correction", protocol=self.name, problem=problem, form=self.form(tools))

    def render_action(self, thought: str, name: str, arguments: str, tools: list[dict]) -> str:
        """One action as the model would have written it."""
        raise NotImplementedError

    def render_finish(self, answer: str) -> str:
        """A final answer as the model would have written it."""
        raise NotImplementedError

    def decode(self, text: str | None, tools: list[dict], *, cut_off: bool = False) -> Decoded:
        raise NotImplementedError

    def _assistant(self, message: dict, tools: list[dict]) -> dict:
        calls = message.get("tool_calls") or []
        text = _text(message)
        out = {k: v for k, v in message.items() if k != "tool_calls"}
        if not calls:
            out["content"] = self.render_finish(text)
        elif any(_name(c) == PROTOCOL_ERROR for c in calls):
            out["content"] = text
        else:
            blocks = [self.render_action(text if i == 0 else "", _name(c), _arguments(c), tools)
                      for i, c in enumerate(calls)]
            out["content"] = "\n".join(blocks)
        return out

    def _observation(self, message: dict, messages: list[dict]) -> str:
        call_id = message.get("tool_call_id")
        names = {c.get("id"): _name(c) for m in messages if m.get("role") == "assistant"
                 for c in m.get("tool_calls") or []}
        text = _text(message)
        return text if names.get(call_id) == PROTOCOL_ERROR else OBSERVATION_PREFIX + text


def _add_user(out: list[dict], message: dict | str) -> None:
    """Append a user message, joined to the one before it when that is a user message too."""
    message = {"role": "user", "content": message} if isinstance(message, str) else message
    last = out[-1] if out else None
    if (last is not None and last.get("role") == "user" and isinstance(last.get("content"), str)
            and isinstance(message.get("content"), str)):
        out[-1] = {**last, "content": f"{last['content']}\n\n{message['content']}"}
        return
    out.append(message)


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _name(call: Any) -> str:
    return str((call.get("function") or {}).get("name", "")) if isinstance(call, dict) else ""


def _arguments(call: dict) -> str:
    raw = (call.get("function") or {}).get("arguments")
    return raw if isinstance(raw, str) else "{}"
