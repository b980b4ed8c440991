"""The ReAct protocol, in HelloCodeAgentCli's form.

`Thought: ...` then one `Action: NAME[{json}]` or `Action: Finish[answer]` (bare forms for
known names only); tolerant of case, bold, Chinese labels and fences; no action, several
actions or a cut reply are violations. Reference: docs/protocols.md ("ReAct", "Parsing").
"""

from __future__ import annotations

import re

from ctxagent.protocols.base import Decoded, clean_arguments, strip_fences, tool_names
from ctxagent.protocols.text import TextProtocol

_LABEL = r"^\s*(?:\*\*)?\s*({})\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?"
_ACTION = re.compile(_LABEL.format("action|行动"), re.IGNORECASE)
_THOUGHT = re.compile(_LABEL.format("thought|思考"), re.IGNORECASE)
_OBSERVATION = re.compile(_LABEL.format("observation|观察"), re.IGNORECASE)
_CALL = re.compile(r"^\s*`*\s*([A-Za-z_][\w.-]*)\s*\[(.*)\]\s*`*\s*$", re.DOTALL)
FINISH = "Finish"


class ReactProtocol(TextProtocol):
    """The ReAct protocol; see the module doc. Stateless."""

    name = "react"

    def render_action(self, thought: str, name: str, arguments: str, tools: list[dict]) -> str:
        """`Thought: ...` (when there is one) and `Action: NAME[args]`."""
        head = f"Thought: {thought.strip()}\n" if thought.strip() else ""
        return f"{head}Action: {name}[{arguments}]"

    def render_finish(self, answer: str) -> str:
        """`Action: Finish[answer]`."""
        return f"Action: {FINISH}[{answer.strip()}]"

    def decode(self, text: str | None, tools: list[dict], *, cut_off: bool = False) -> Decoded:
        """Read one reply; see the module doc for what is tolerated and what is refused."""
        return parse_react(text or "", tools, cut_off=cut_off)


def parse_react(text: str, tools: list[dict], *, cut_off: bool = False) -> Decoded:
    """The ReAct reply `text` as one Decoded action (pure; `tools` give the bare names)."""
    lines = strip_fences(text).split("\n")
    bare = {n.lower() for n in tool_names(tools)} | {FINISH.lower()}
    starts = [i for i, line in enumerate(lines) if _is_action(line, bare)]
    if not starts:
        return Decoded("violation", problem="the reply has no action line (Action: NAME[{...}] or Finish[answer])")
    if len(starts) > 1:
        return Decoded("violation", problem=f"the reply has {len(starts)} actions; send exactly one per reply")
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines)) if _THOUGHT.match(lines[i]) or _OBSERVATION.match(lines[i])),
               len(lines))
    if any(_OBSERVATION.match(line) for line in lines[start + 1:]):
        return Decoded("violation", problem="the reply goes on after its action with an Observation it made up; "
                                            "stop after the action, the observation comes from ctxagent")
    thought = _thought(lines[:start])
    segment = _ACTION.sub("", lines[start], count=1) + "\n" + "\n".join(lines[start + 1:end])
    return _action(strip_fences(segment), thought, cut_off)


def _is_action(line: str, bare: set[str]) -> bool:
    if _ACTION.match(line):
        return True
    match = re.match(r"^\s*`*\s*([A-Za-z_][\w.-]*)\s*\[", line)
    return bool(match) and match.group(1).lower() in bare


def _thought(lines: list[str]) -> str:
    text = "\n".join(lines).strip()
    return _THOUGHT.sub("", text, count=1).strip()


def _action(segment: str, thought: str, cut_off: bool) -> Decoded:
    match = _CALL.match(segment)
    if match is None:
        if cut_off:
            return Decoded("violation", problem="the reply was cut off by the output token limit before the "
                                                "action's closing ]; send a shorter action")
        return Decoded("violation", problem="the action is not NAME[...]: write the tool name, then its JSON "
                                            "arguments in square brackets, on the Action line")
    name, inside = match.group(1), match.group(2)
    if name.lower() == FINISH.lower():
        return Decoded("finish", thought=thought, answer=inside.strip())
    return Decoded("action", thought=thought, name=name, arguments=clean_arguments(inside))
