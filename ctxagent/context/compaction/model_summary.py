"""The LLM side of compaction: the summary request and the model wiring.

`prefix_summary_request`: the conversation's own request (byte-identical, so a provider's
prompt cache reuses it) plus one user message asking for the summary (`compaction_request.md`);
`build_summary_request`: the fallback, the `compaction.md` prompt and a transcript of the
messages, shrunk to the input budget. `llm_summarizer(client)` gives the `summarize(messages,
tools=None) -> str` callable that `compact_conversation` takes (docs/compaction.md).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ctxagent.context.compaction.facts import extract_facts
from ctxagent.context.compaction.masking import calls_by_id, describe_call, first_line, is_masked
from ctxagent.context.compaction.sections import SECTIONS, is_summary_message
from ctxagent.context.messages import truncate_observation
from ctxagent.context.state.render import state_sections
from ctxagent.templates import render

#: Per-role character caps of the transcript, first try; halved while it does not fit.
CAPS = {"tool": 2_000, "assistant": 4_000, "user": 12_000}
_MIN_CAPS = {"tool": 0, "assistant": 200, "user": 1_000}
_ROUNDS = 12


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _block(message: dict, calls: dict, caps: dict[str, int]) -> str:
    role = message.get("role")
    text = _text(message)
    if is_summary_message(message):
        return f"### Earlier summary (merge it, do not drop it)\n{text}"
    if role == "tool":
        info = calls.get(str(message.get("tool_call_id")))
        body = truncate_observation(text, caps["tool"]) if caps["tool"] > 0 and text else "[output omitted]"
        return f"### Tool result of {describe_call(info)}\n{body}"
    cap = caps.get(role, caps["assistant"])
    body = truncate_observation(text, cap) if text else ""
    lines = [f"### {str(role).capitalize()}", body] if body else [f"### {str(role).capitalize()}"]
    for call in message.get("tool_calls") or []:
        lines.append(f"-> calls {describe_call(calls.get(str(call.get('id'))))}")
    return "\n".join(lines)


def render_transcript(messages: list[dict], caps: dict[str, int] | None = None) -> str:
    """The messages as a readable transcript, each text cut to its role's cap (characters)."""
    caps = caps or CAPS
    calls = calls_by_id(messages)
    return "\n\n".join(_block(m, calls, caps) for m in messages)


def fit_transcript(messages: list[dict], max_tokens: int, count_text: Callable[[str], int]) -> str:
    """`render_transcript` within `max_tokens`: halve tool caps, then assistant, then user
    caps; as a last resort cut the whole transcript (head + tail kept, marked)."""
    caps = dict(CAPS)
    text = render_transcript(messages, caps)
    for _ in range(_ROUNDS):
        tokens = count_text(text)
        if tokens <= max_tokens:
            return text
        role = next((r for r in ("tool", "assistant", "user") if caps[r] > _MIN_CAPS[r]), None)
        if role is None:
            break
        caps[role] = caps[role] // 2 if caps[role] // 2 >= max(_MIN_CAPS[role], 50) else _MIN_CAPS[role]
        text = render_transcript(messages, caps)
    tokens = count_text(text)
    if tokens > max_tokens:
        text = truncate_observation(text, max(40, int(len(text) * max_tokens / tokens * 0.9)))
    return text


def build_summary_request(messages: list[dict], *, state: dict | None, focus: str | None, max_tokens: int,
                          count_text: Callable[[str], int], request_tokens: int) -> list[dict]:
    """The chat request that asks the model for a summary of `messages`.

    `max_tokens`: the summary's size limit (stated in the prompt); `request_tokens`: the
    model's input budget, which the whole request stays within (tokens, counted with
    `count_text`; 64 tokens are left for message framing).
    """
    layers = dict(state_sections(state))
    system = render(
        "ctxagent.context.compaction",
        "compaction",
        headings=[heading for _, heading in SECTIONS],
        max_tokens=max_tokens,
        focus=(focus or "").strip(),
        todos=layers.get("todos", "").partition("\n")[2],
        notes=_note_titles(state),
    )
    room = max(200, request_tokens - count_text(system) - 64)
    transcript = fit_transcript(messages, room, count_text)
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Messages to summarize:\n\n{transcript}"}]


def prefix_summary_request(prefix: list[dict], *, covered: list[dict], originals: list[dict], kept: dict | None,
                           latest: bool, focus: str | None, max_tokens: int) -> list[dict]:
    """`prefix` (the request as sent: system, conversation, state block) and a last user
    message asking for the summary of `covered` (its messages as sent; `originals`: the same
    before masking, whose first and error lines it lists), with `kept` the first message of
    the verbatim tail (None: no tail) and `latest` whether the latest user message is kept."""
    calls = calls_by_id([*prefix, *originals])
    facts = []
    for sent, original in zip(covered, originals):
        if sent.get("role") != "tool" or not is_masked(sent) or is_masked(original):
            continue
        text = _text(original)
        lines = [first_line(text), *(f.text for f in extract_facts(text, source="tool", error_limit=3))]
        described = describe_call(calls.get(str(original.get("tool_call_id"))))
        facts += [f"- {described}: {line}" for line in dict.fromkeys(x for x in lines if x)]
    ask = render("ctxagent.context.compaction", "compaction_request", headings=[h for _, h in SECTIONS],
                 max_tokens=max_tokens, focus=(focus or "").strip(), kept=_describe(kept, calls), latest=latest,
                 facts="\n".join(facts))
    return [*prefix, {"role": "user", "content": ask}]


def _describe(message: dict | None, calls: dict) -> str:
    """How the summary request names the first message kept verbatim."""
    if message is None:
        return ""
    role = str(message.get("role"))
    if role == "tool":
        return f"the result of {describe_call(calls.get(str(message.get('tool_call_id'))))}"
    if message.get("tool_calls"):
        return f"the {role} message that calls {describe_call(calls.get(str(message['tool_calls'][0].get('id'))))}"
    words = " ".join(_text(message).split()[:8])
    return f'the {role} message "{words}"' if words else f"the last {role} message"


def _note_titles(state: dict | None) -> str:
    notes = (state or {}).get("notes")
    if isinstance(notes, str):
        return notes.strip()[:2000]
    if not isinstance(notes, list):
        return ""
    titles = [str(n.get("title") or n.get("id")) for n in notes if isinstance(n, dict) and (n.get("title") or n.get("id"))]
    return "\n".join(f"- {t}" for t in titles)


def llm_summarizer(client: Any) -> Callable[..., str]:
    """`summarize(messages, tools=None) -> str` backed by an `LLMClient`: `tools` (the
    conversation's schemas, sent so the request keeps its cached prefix) go with
    tool_choice "none", so the reply is text. Errors of the client propagate;
    `compact_conversation` catches them and falls back to the extractive summary."""

    def summarize(messages: list[dict], tools: list[dict] | None = None) -> str:
        if tools:
            return client.chat(messages, tools=tools, tool_choice="none").content or ""
        return client.chat(messages, tools=None).content or ""

    return summarize


def takes_tools(summarize: Callable[..., str]) -> bool:
    """Whether `summarize` accepts `tools=` (the prefix summary request needs it; a textbook
    one-argument summarizer gets the transcript request instead). A `takes_tools` attribute wins."""
    flag = getattr(summarize, "takes_tools", None)
    if flag is not None:
        return bool(flag)
    try:
        params = inspect.signature(summarize).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "tools" or p.kind is p.VAR_KEYWORD for p in params)
