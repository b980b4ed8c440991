"""The deterministic extractive summary: the fallback when the LLM summary fails.

Built from the compacted messages, the session state and earlier summaries (carried
forward, case C03); nothing paraphrased (`facts`). Item priorities (3 user-stated ..
0 tool chatter) let `fit_sections` shrink it to a budget (docs/compaction.md).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from ctxagent.context.compaction.facts import Fact, command_of_call, dedupe_facts, extract_facts
from ctxagent.context.compaction.masking import calls_by_id, describe_call, first_line, is_masked
from ctxagent.context.compaction.sections import SECTIONS, is_summary_message, parse_summary, render_summary
from ctxagent.context.state.render import todo_items

Item = tuple[int, str]  # (priority, text)
USER, HIGH, MID, LOW = 3, 2, 1, 0
QUOTE_CHARS = 600
#: Commands of the model's own tool calls listed under Key facts (the latest ones).
RECENT_COMMANDS = 8
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don'?t|do not|should|shouldn'?t|only|avoid|prefer|keep|without|required?|"
    r"make sure|no more than|at most|at least)\b|不要|必须|只|保持|禁止",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _quote(text: str, limit: int = QUOTE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " [...]"


def _carry_forward(messages: list[dict]) -> dict[str, list[Item]]:
    """Items of earlier summaries among `messages`; user-stated ones keep top priority."""
    out: dict[str, list[Item]] = {key: [] for key, _ in SECTIONS}
    for message in messages:
        if not is_summary_message(message):
            continue
        for key, items in parse_summary(_text(message)).items():
            for item in items:
                if item == "(none)":
                    continue
                out[key].append((_carried_priority(key, item), item))
    return out


def _carried_priority(key: str, item: str) -> int:
    if "(stated by user)" in item or item.startswith("User (verbatim)") or key == "constraints":
        return USER
    if item.startswith(("Called ", "[command]", "[error]", "Tool calls in")):
        return LOW
    return MID


def _user_items(messages: list[dict]) -> tuple[list[Item], list[Item]]:
    """(goal items: quoted user requests, constraint items: sentences with must/never...)."""
    goal, constraints = [], []
    for message in messages:
        if message.get("role") != "user" or is_summary_message(message):
            continue
        text = _text(message)
        if text.strip():
            goal.append((USER, f'User (verbatim): "{_quote(text)}"'))
        for sentence in _SENTENCE.findall(text):
            if _CONSTRAINT.search(sentence) and len(sentence.strip()) > 3:
                constraints.append((USER, sentence.strip()[:300]))
    return goal, constraints


def _facts(messages: list[dict]) -> list[Item]:
    facts: list[Fact] = []
    calls = calls_by_id(messages)
    for message in messages:
        role = message.get("role")
        if is_summary_message(message) or (role == "tool" and is_masked(message)):
            continue
        source = {"user": "user", "assistant": "assistant"}.get(role, "tool")
        facts += extract_facts(_text(message), source=source, error_limit=3)
    priority = {"user": USER, "assistant": MID, "tool": LOW}
    items = [(priority[f.source], f.render()) for f in dedupe_facts(facts)]
    for message in messages:  # what each tool result began with: a grep hit, a file's first line (issue 16)
        head = first_line(_text(message)) if message.get("role") == "tool" and not is_masked(message) else ""
        if head:
            info = calls.get(str(message.get("tool_call_id")))
            items.append((MID, f"[output] {describe_call(info)}: {head}"))
    commands = [command_of_call(info.name, info.arguments) for info in calls.values()]
    recent = list(dict.fromkeys(c for c in commands if c))[-RECENT_COMMANDS:]
    return items + [(LOW, Fact("command", c, "tool").render()) for c in recent]


def _progress(messages: list[dict], state: dict | None) -> tuple[list[Item], list[Item]]:
    """(progress items, current-state items) from the todo board and the messages."""
    calls = calls_by_id(messages)
    tally = Counter(info.name for info in calls.values())
    progress: list[Item] = [(HIGH, f"Done: {title}") for status, title in todo_items(state) if status == "done"]
    if tally:
        counts = ", ".join(f"{name} x{n}" for name, n in tally.most_common())
        progress.append((HIGH, f"Tool calls in the compacted messages: {counts}"))
    said = [_quote(_text(m), 200) for m in messages if m.get("role") == "assistant" and _text(m).strip()]
    progress += [(MID, f"Assistant: {text}") for text in said]  # the agent's findings; oldest dropped first
    recent = [describe_call(i) for i in list(calls.values())[-6:] if not command_of_call(i.name, i.arguments)]
    progress += [(LOW, f"Called {text}") for text in recent]
    current: list[Item] = [(HIGH, f"In progress: {title}") for status, title in todo_items(state) if status == "active"]
    if said:
        current.append((MID, f"Last assistant message before compaction: {said[-1]}"))
    return progress, current


def _next_steps(state: dict | None) -> list[Item]:
    pending = [(HIGH, title) for status, title in todo_items(state) if status == "pending"]
    return pending + [(USER, "Continue with the latest user request (the last user message).")]


def _notes(state: dict | None) -> list[Item]:
    notes = (state or {}).get("notes")
    if not isinstance(notes, list):
        return []
    titles = [n.get("title") or n.get("id") for n in notes if isinstance(n, dict)]
    return [(MID, f"Note kept: {t}") for t in titles if t]


def extractive_sections(messages: list[dict], state: dict | None = None, focus: str | None = None) -> dict[str, list[Item]]:
    """Prioritised items per section key for the messages being compacted.

    `messages`: the compacted span (earlier summary messages included: carried forward);
    `state`: the session state (see `ctxagent.context.state.render`); `focus`: the user's
    `/compact` focus, recorded under Goal.
    """
    carried = _carry_forward(messages)
    goal, constraints = _user_items(messages)
    progress, current = _progress(messages, state)
    sections: dict[str, list[Item]] = {
        "goal": [(USER, "The task is the first user message, kept verbatim above this summary.")],
        "progress": carried["progress"] + progress + _notes(state),
        "constraints": carried["constraints"] + constraints,
        "facts": carried["facts"] + _facts(messages),
        "state": current or carried["state"],
        "next": _next_steps(state) if todo_items(state) else carried["next"] + _next_steps(state),
    }
    if focus:
        sections["goal"].append((USER, f"Focus requested for this compaction: {focus.strip()}"))
    sections["goal"] += carried["goal"] + goal
    return {key: _dedupe(items) for key, items in sections.items()}


def _dedupe(items: list[Item]) -> list[Item]:
    best: dict[str, int] = {}
    order: list[str] = []
    for priority, text in items:
        if text not in best:
            order.append(text)
        best[text] = max(priority, best.get(text, -1))
    return [(best[text], text) for text in order]


def fit_sections(sections: dict[str, list[Item]], fits: Callable[[str], bool]) -> str:
    """Render `sections`, dropping items lowest priority first (oldest first within a
    priority) until `fits(rendered)` is true. Returns the rendered text; if even the
    priority-3 items do not fit they are dropped too, oldest first, down to the headings.
    """
    current = {key: list(items) for key, items in sections.items()}
    text = _render(current)
    if fits(text):
        return text
    order = sorted(((p, i, key) for key, items in current.items() for i, (p, _) in enumerate(items)), key=lambda t: (t[0], t[1]))
    drop: set[tuple[str, int]] = set()
    step = max(1, len(order) // 32)
    for n in range(0, len(order), step):
        drop.update((key, i) for _, i, key in order[n:n + step])
        kept = {key: [it for i, it in enumerate(items) if (key, i) not in drop] for key, items in current.items()}
        text = _render(kept)
        if fits(text):
            return text
    return text


def _render(sections: dict[str, list[Item]]) -> str:
    return render_summary({key: [text for _, text in items] for key, items in sections.items()})


def extractive_summary(messages: list[dict], state: dict | None = None, focus: str | None = None,
                       fits: Callable[[str], bool] = lambda _t: True) -> str:
    """The rendered extractive summary of `messages` (see `extractive_sections`), shrunk to `fits`."""
    return fit_sections(extractive_sections(messages, state, focus), fits)


def user_facts(messages: list[dict]) -> list[str]:
    """Rendered user-stated facts of `messages` (earlier summaries' user facts included).

    Used to put back into an LLM summary the facts it left out.
    """
    carried = [text for p, text in _carry_forward(messages)["facts"] if p == USER]
    fresh = [text for p, text in _facts(messages) if p == USER]
    return list(dict.fromkeys(carried + fresh))


def fact_span(rendered: str) -> str:
    """The verbatim span of a rendered fact line (`[path] a.py (stated by user)` -> `a.py`)."""
    text = re.sub(r"^\[[a-z]+\]\s*", "", rendered)
    return text.removesuffix(" (stated by user)")

