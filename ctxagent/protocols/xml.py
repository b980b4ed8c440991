"""The XML protocol (the Claude-Code-style protocol of the seed agent).

Optional `<thinking>`, then exactly one `<tool name="NAME">{json}</tool>`,
`<python>code</python>` or `<finish>answer</finish>`; strict about structure, tolerant
about form. Reference: docs/protocols.md ("XML", "Parsing").
"""

from __future__ import annotations

import json
import re

from ctxagent.protocols.base import PYTHON_TOOL, Decoded, clean_arguments, code_key, parse_json_object, strip_fences
from ctxagent.protocols.text import TextProtocol

_ACTIONS = ("tool", "python", "finish")
_OPEN = re.compile(r"<\s*(tool|python|finish)\b([^<>]*)>", re.IGNORECASE)
_THINKING = re.compile(r"<\s*(thinking|think)\s*>(.*?)<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_NAME = re.compile(r"""name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>/]+))""", re.IGNORECASE)
_INVENTED = re.compile(r"^\s*(?:\*\*)?(observation|result|tool[ _]?(?:result|response|output))(?:\*\*)?\s*[:：]|"
                       r"<\s*(observation|result|tool_response)\b", re.IGNORECASE | re.MULTILINE)


def _close(tag: str) -> re.Pattern:
    return re.compile(rf"<\s*/\s*{tag}\s*>", re.IGNORECASE)


class XmlProtocol(TextProtocol):
    """The XML protocol; see the module doc. Stateless."""

    name = "xml"

    def render_action(self, thought: str, name: str, arguments: str, tools: list[dict]) -> str:
        """`<thinking>` (when there is a thought) and the action block."""
        head = f"<thinking>\n{thought.strip()}\n</thinking>\n" if thought.strip() else ""
        args = parse_json_object(arguments)
        key = code_key(tools)
        if name == PYTHON_TOOL and args is not None and set(args) == {key} and isinstance(args[key], str):
            return f"{head}<python>\n{args[key].strip()}\n</python>"
        return f'{head}<tool name="{name}">{arguments}</tool>'

    def render_finish(self, answer: str) -> str:
        """`<finish>answer</finish>`."""
        return f"<finish>\n{answer.strip()}\n</finish>"

    def decode(self, text: str | None, tools: list[dict], *, cut_off: bool = False) -> Decoded:
        """Read one reply; see the module doc for what is tolerated and what is refused."""
        return parse_xml(text or "", tools, cut_off=cut_off)


def parse_xml(text: str, tools: list[dict], *, cut_off: bool = False) -> Decoded:
    """The XML reply `text` as one Decoded action (pure; `tools` give python_exec's argument)."""
    text = strip_fences(text)
    thoughts = [m.group(2).strip() for m in _THINKING.finditer(text)]
    rest = _THINKING.sub("\n", text)
    blocks, problem = _blocks(rest, cut_off)
    if problem:
        return Decoded("violation", problem=problem)
    if not blocks:
        return Decoded("violation", problem="the reply has no action (no <tool>, <python> or <finish> block)")
    if len(blocks) > 1:
        found = ", ".join(f"<{b[0]}>" for b in blocks)
        return Decoded("violation", problem=f"the reply has {len(blocks)} actions ({found}); send exactly one per reply")
    tag, attrs, body, start, end = blocks[0]
    before = strip_fences(rest[:start]).strip()
    if _INVENTED.search(rest[end:]):
        return Decoded("violation", problem="the reply goes on after its action with an observation it made up; "
                                            "stop after the action, the observation comes from ctxagent")
    thought = "\n\n".join(t for t in [*thoughts, before] if t)
    return _action(tag, attrs, body, thought, tools)


def _blocks(text: str, cut_off: bool) -> tuple[list[tuple[str, str, str, int, int]], str]:
    """The action blocks of `text`, in order: (tag, attributes, body, start, end); or a problem."""
    blocks, pos = [], 0
    while True:
        match = _OPEN.search(text, pos)
        if match is None:
            return blocks, ""
        tag = match.group(1).lower()
        close = _close(tag).search(text, match.end())
        if close is None:
            if cut_off:
                return [], f"the reply was cut off by the output token limit inside <{tag}>; send a shorter action"
            if _OPEN.search(text, match.end()) is not None:
                return [], f"the <{tag}> block is not closed with </{tag}>"
            blocks.append((tag, match.group(2), text[match.end():], match.start(), len(text)))
            return blocks, ""
        blocks.append((tag, match.group(2), text[match.end():close.start()], match.start(), close.end()))
        pos = close.end()


def _action(tag: str, attrs: str, body: str, thought: str, tools: list[dict]) -> Decoded:
    if tag == "finish":
        return Decoded("finish", thought=thought, answer=body.strip())
    if tag == "python":
        return Decoded("action", thought=thought, name=PYTHON_TOOL,
                       arguments=json.dumps({code_key(tools): strip_fences(body)}, ensure_ascii=False))
    match = _NAME.search(attrs)
    name = next((g for g in match.groups() if g), "").strip() if match else ""
    if not name:
        return Decoded("violation", problem='the <tool> tag has no name; write <tool name="TOOL_NAME">')
    return Decoded("action", thought=thought, name=name, arguments=clean_arguments(body))
