"""What a protocol is: one reply read as one action, and a history written back as text.

Inside ctxagent everything is native form; a text protocol translates at the request
boundary (`encode` the history, `decode` a reply into `Decoded`). A reply that breaks it
is one `PROTOCOL_ERROR` call answered by `violation_call`'s correction (docs/protocols.md).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal, Protocol

#: The pseudo-tool of a reply that broke the protocol; its result is the correction.
PROTOCOL_ERROR = "protocol_error"
#: How an observation starts when it goes back to the model as a user message.
OBSERVATION_PREFIX = "Observation: "
#: The tool `<python>` blocks run, and its code argument when its schema names none.
PYTHON_TOOL, DEFAULT_CODE_KEY = "python_exec", "code"

_FENCE_LINE = re.compile(r"^\s*(```|~~~)[\w+-]*\s*$")


@dataclass(frozen=True)
class Decoded:
    """One reply read back. kind "action": `name` and raw JSON `arguments`; "finish":
    `answer`; "violation": `problem` (what was wrong, one sentence). `thought`: the
    reasoning shown before the action (may be empty)."""

    kind: Literal["action", "finish", "violation"]
    thought: str = ""
    name: str = ""
    arguments: str = "{}"
    answer: str = ""
    problem: str = ""


class WireProtocol(Protocol):
    """A protocol as the loop uses it: `name`, `native` (tools sent as the `tools`
    parameter, replies read as they are), `encode` and `decode`."""

    name: str
    native: bool

    def encode(self, messages: list[dict], tools: list[dict]) -> tuple[list[dict], list[dict] | None]:
        """(messages, tools) as sent: native-form history in, wire form out (inputs unchanged)."""
        ...

    def decode(self, text: str | None, tools: list[dict], *, cut_off: bool = False) -> Decoded:
        """The model's reply text read as one action (`cut_off`: finish_reason was "length")."""
        ...

    def correction(self, problem: str, tools: list[dict]) -> str:
        """The message that tells the model what was wrong and shows the expected form."""
        ...


def new_call_id() -> str:
    """A fresh tool-call id for an action read from text (`call_<24 hex>`)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def violation_call(raw: str, problem: str) -> dict:
    """The assistant message of a reply that broke the protocol: its raw text, and one
    call to PROTOCOL_ERROR (arguments `{"problem": ...}`) that the correction answers."""
    call = {"id": new_call_id(), "type": "function",
            "function": {"name": PROTOCOL_ERROR, "arguments": json.dumps({"problem": problem})}}
    return {"role": "assistant", "content": raw, "tool_calls": [call]}


def strip_fences(text: str) -> str:
    """`text` without a code fence line at its start or end (```json, ```xml, ~~~...),
    and without the blank lines around; inner fences are kept."""
    lines = text.strip().split("\n")
    if lines and _FENCE_LINE.match(lines[0]):
        lines = lines[1:]
    if lines and _FENCE_LINE.match(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines).strip()


def clean_arguments(raw: str) -> str:
    """Raw JSON arguments as the tool runner should get them: fences and surrounding white
    space dropped, `{}` when nothing is left (the runner says when it is not valid JSON)."""
    text = strip_fences(raw)
    return text if text else "{}"


def code_key(tools: list[dict]) -> str:
    """The argument of PYTHON_TOOL that carries the code: its first required string
    property (else its first string property), or DEFAULT_CODE_KEY without it."""
    for schema in tools:
        function = schema.get("function") or {}
        if function.get("name") != PYTHON_TOOL:
            continue
        params = function.get("parameters") or {}
        props = params.get("properties") or {}
        strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
        required = [k for k in params.get("required") or [] if k in strings]
        if required or strings:
            return (required or strings)[0]
    return DEFAULT_CODE_KEY


def tool_names(tools: list[dict]) -> list[str]:
    """The names of OpenAI tool schemas, in order."""
    return [str((t.get("function") or {}).get("name", "")) for t in tools if (t.get("function") or {}).get("name")]


def parse_json_object(raw: str) -> dict[str, Any] | None:
    """`raw` as a JSON object, or None when it is not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
