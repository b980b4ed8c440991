"""Chat messages as plain OpenAI dicts: normalisation, call/result pairing, history units, truncation.

Rules (docs/context.md "Message rules"; cases C01, C02, C05, C06, C07): one result per
tool call, assistant messages with calls kept, extra keys (`reasoning_content`) untouched,
a call and its results one unit, long tool output cut to head + tail (JSON keys kept).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Iterable

from ctxagent.errors import CtxAgentError

INTERRUPTED_RESULT = "not executed: interrupted"
"""Content of the synthetic result given to a call that has none (case C02)."""

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})

_MARKER = "[... {n:,} characters truncated ...]"
_MIN_VALUE_CHARS = 40  # JSON strings are never cut below this many characters
_INNER_MARKER = re.compile(r"\[\.\.\. [^\n\[\]]{1,300} \.\.\.\]")  # a tool's own truncation marker
_OWN_MARKER = re.compile(r"\[\.\.\. ([\d,]+) characters truncated \.\.\.\]")
_MAX_INNER_CHARS = 300


class MessageError(CtxAgentError, ValueError):
    """A chat message is malformed (unknown role, missing content, bad tool call)."""


def to_dict(message: Any) -> dict:
    """One message as an OpenAI dict; accepts dicts and objects with `role`/`content`.

    A `Message`-like object's `timestamp` is kept under the key `timestamp` (as Unix
    seconds) so recency can use it; `strip_private` removes it before sending.
    Raises `MessageError` for an unknown role or a non-string content.
    """
    if isinstance(message, dict):
        msg = message
    elif hasattr(message, "role") and hasattr(message, "content"):
        msg = {"role": message.role, "content": message.content}
        stamp = getattr(message, "timestamp", None)
        if stamp is not None:
            msg["timestamp"] = stamp.timestamp() if isinstance(stamp, datetime) else float(stamp)
    else:
        raise MessageError(f"expected a dict with 'role' and 'content' or a Message, got {type(message).__name__}")
    role = msg.get("role")
    if role not in ROLES:
        raise MessageError(f"message role must be one of {sorted(ROLES)}, got {role!r}")
    content = msg.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise MessageError(f"message content must be a string, a list of parts or None, got {type(content).__name__}")
    return msg


def normalize(messages: Iterable[Any] | None) -> list[dict]:
    """`to_dict` applied to every message (None -> [])."""
    return [to_dict(m) for m in messages or []]


def strip_private(message: dict) -> dict:
    """The message without keys the API does not take (`timestamp`); same dict if none."""
    if "timestamp" not in message:
        return message
    return {k: v for k, v in message.items() if k != "timestamp"}


def call_ids(message: dict) -> list[str]:
    """Ids of the tool calls of an assistant message, in order ([] if none)."""
    if message.get("role") != "assistant":
        return []
    return [str(c.get("id", "")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]


def has_content(message: dict) -> bool:
    """True if `content` holds text or parts (None, "" and whitespace-only do not count)."""
    content = message.get("content")
    if isinstance(content, list):
        return bool(content)
    return bool(content and str(content).strip())


def tool_message(call_id: str, content: str = INTERRUPTED_RESULT) -> dict:
    """The `tool` message answering `call_id`; by default the synthetic result of a call
    that never produced one ("not executed: interrupted", case C02)."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def repair_pairing(messages: list[dict], *, note: str = INTERRUPTED_RESULT) -> list[dict]:
    """A pairing-valid copy of `messages` (case C02; the input is not modified): a call without a
    result gets a synthetic one, a late result moves up to its call, orphan and duplicate results
    are dropped, empty assistant messages dropped (C07), other keys kept (C06); a valid list comes
    back equal, same objects (C02b). Rules in docs/context.md ("Message rules")."""
    out: list[dict] = []
    consumed: set[int] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            continue  # placed with its call below, or an orphan
        if role == "assistant" and "tool_calls" in msg and not msg.get("tool_calls"):
            msg = {k: v for k, v in msg.items() if k != "tool_calls"}
        ids = call_ids(msg)
        if role == "assistant" and not ids and not has_content(msg):
            continue
        out.append(msg)
        if ids:
            out.extend(_results_for(messages, i, ids, consumed, note))
    return out


def _results_for(messages: list[dict], start: int, ids: list[str], consumed: set[int], note: str) -> list[dict]:
    """The results for `ids` found after `start` (up to the next assistant), then synthetics."""
    wanted = set(ids)
    found: list[dict] = []
    for j in range(start + 1, len(messages)):
        msg = messages[j]
        if msg.get("role") == "assistant":
            break
        call_id = msg.get("tool_call_id")
        if msg.get("role") == "tool" and j not in consumed and call_id in wanted:
            wanted.discard(call_id)
            consumed.add(j)
            found.append(msg)
    for call_id in ids:
        if call_id in wanted:
            wanted.discard(call_id)
            found.append(tool_message(call_id, note))
    return found


def unanswered_calls(messages: list[dict]) -> list[str]:
    """Ids of tool calls with no `tool` result right after their assistant message (empty when valid)."""
    missing: list[str] = []
    open_ids: list[str] = []
    for message in [*messages, {"role": "user"}]:
        if message.get("role") == "tool":
            if message.get("tool_call_id") in open_ids:
                open_ids.remove(message.get("tool_call_id"))
            continue
        missing.extend(open_ids)
        open_ids = call_ids(message) if message.get("role") == "assistant" else []
    return missing


def pairing_errors(messages: list[dict]) -> list[str]:
    """Each pairing violation, described (empty list when valid): a call without a result
    right after it, a result answering no call of the assistant message before it, a second
    result for one call, an assistant message with neither content nor tool calls. Call ids
    need only be unique within one assistant message (some local servers reuse `call_0`)."""
    errors = [f"call {i} has no result" for i in unanswered_calls(messages)]
    open_ids: set[str] = set()
    seen: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                errors.append(f"message {index}: tool result {call_id} answers no preceding call")
            elif call_id in seen:
                errors.append(f"message {index}: second result for {call_id}")
            seen.add(call_id)
            continue
        if role == "assistant" and not call_ids(message) and not has_content(message):
            errors.append(f"message {index}: assistant message with neither content nor tool calls")
        open_ids, seen = (set(call_ids(message)) if role == "assistant" else set()), set()
    return errors


def is_valid_pairing(messages: list[dict]) -> bool:
    """True if every call has exactly one result right after it and no result is orphaned."""
    return not pairing_errors(messages)


def history_units(messages: list[dict]) -> list[list[dict]]:
    """Group messages into units: an assistant with tool calls plus the `tool` messages that
    follow it is one unit; every other message is a unit of its own.

    Expects a pairing-valid list (see `repair_pairing`); stray `tool` messages become
    units of their own rather than being lost.
    """
    units: list[list[dict]] = []
    for msg in messages:
        if msg.get("role") == "tool" and units and call_ids(units[-1][0]):
            units[-1].append(msg)
        else:
            units.append([msg])
    return units


def truncate_observation(text: str, max_chars: int) -> str:
    """`text` cut to at most `max_chars` characters, head and tail around
    `[... N characters truncated ...]` (case C05), snapped to a nearby line break; a tool's own
    marker in the cut part (`[... 30,000,000 bytes of output dropped ...]`) is kept in it. Below
    about 40 characters simply cut. Raises `MessageError` if `max_chars` < 1."""
    if max_chars < 1:
        raise MessageError(f"max_chars must be >= 1, got {max_chars}")
    if len(text) <= max_chars:
        return text
    marker = _MARKER.format(n=len(text))
    for _ in range(2):  # the second pass makes room for the inner markers the first one found
        keep = max_chars - len(marker) - 2
        if keep < 2:
            return text[:max_chars]  # no room for a marker: a plain cut
        head = _snap_head(text[: keep * 3 // 5])
        tail = _snap_tail(text[len(text) - (keep - keep * 3 // 5) :])
        removed = len(text) - len(head) - len(tail)
        inner = _INNER_MARKER.findall(text, len(head), len(text) - len(tail))
        ours = [_OWN_MARKER.fullmatch(m) for m in inner]  # an earlier cut of ours: its count adds up
        removed += sum(int(m[1].replace(",", "")) - len(m[0]) - 2 for m in ours if m)  # with its two line breaks
        said = "; ".join(m.strip("[]. ") for m, own in zip(inner, ours) if not own)[:_MAX_INNER_CHARS]
        marker = _MARKER.format(n=removed) if not said else f"[... {removed:,} characters truncated, among them: {said} ...]"
    return f"{head}\n{marker}\n{tail}"


def _snap_head(head: str) -> str:
    cut = head.rfind("\n")
    return head[:cut] if cut >= len(head) * 4 // 5 else head


def _snap_tail(tail: str) -> str:
    cut = tail.find("\n")
    return tail[cut + 1 :] if 0 <= cut <= len(tail) // 5 else tail


def truncate_tool_result(content: str, max_chars: int) -> str:
    """A tool result cut to about `max_chars` characters before it enters the history: JSON stays
    valid with every key kept (long strings and arrays cut with a marker); other text, or JSON
    whose keys alone exceed `max_chars`, gets `truncate_observation`."""
    if len(content) <= max_chars:
        return content
    stripped = content.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(content)
        except ValueError:
            data = None
        if isinstance(data, (dict, list)):
            cut = _fit_json(data, max_chars)
            if cut is not None:
                return cut
    return truncate_observation(content, max_chars)


def _fit_json(data: Any, max_chars: int) -> str | None:
    """Binary search of the largest per-string limit whose dump fits; None if none does."""
    low, high, best = _MIN_VALUE_CHARS, max_chars, None
    while low <= high:
        mid = (low + high) // 2
        text = json.dumps(_shrink(data, mid), ensure_ascii=False)
        if len(text) <= max_chars:
            best, low = text, mid + 1
        else:
            high = mid - 1
    return best


def _shrink(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return truncate_observation(value, limit) if len(value) > limit else value
    if isinstance(value, dict):
        return {k: _shrink(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        items = max(2, limit // _MIN_VALUE_CHARS)
        if len(value) > items:
            head = [_shrink(v, limit) for v in value[: items - 1]]
            return head + [f"[... {len(value) - items:,} items truncated ...]", _shrink(value[-1], limit)]
        return [_shrink(v, limit) for v in value]
    return value


def content_text(message: dict) -> str:
    """The text of a message's content: a string as it is, the text of each part of a list
    joined by spaces (other parts give ""), "" for None."""
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def last_user_text(history: Iterable[Any] | None) -> str:
    """Text of the last user message of `history` (dicts or Message objects); "" if none."""
    for msg in reversed(list(history or [])):
        role = msg.get("role") if isinstance(msg, dict) else getattr(msg, "role", None)
        content = msg.get("content") if isinstance(msg, dict) else getattr(msg, "content", None)
        if role == "user" and isinstance(content, str):
            return content
    return ""


def split_current(history: list[dict], query: str | None) -> tuple[list[dict], dict, list[dict]]:
    """(history before the current request, the current request message, the current turn).
    With `query`: the request is `query` (the history's last message if it is the same text)
    and no current turn; without: the last user message and what follows it.
    Raises MessageError if there is neither."""
    if query is not None:
        if history and history[-1].get("role") == "user" and history[-1].get("content") == query:
            return history[:-1], history[-1], []
        return history, {"role": "user", "content": query}, []
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("role") == "user":
            return history[:i], history[i], history[i + 1 :]
    raise MessageError("build_messages needs a user_query or a user message in conversation_history")


#: The key order of every message sent (then any other key, sorted): the same message always
#: serializes to the same bytes, whichever code path built the dict (issue 16: prompt caches).
MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content")
_CALL_KEYS = ("id", "type", "function")


def canonical_message(message: dict) -> dict:
    """`message` with its keys (and each tool call's) in MESSAGE_KEYS order, then the rest
    sorted; tool-call arguments given as a dict become JSON with sorted keys. Values are
    otherwise unchanged, so a valid message stays valid."""
    out = {k: message[k] for k in MESSAGE_KEYS if k in message}
    out.update((k, message[k]) for k in sorted(message) if k not in out)
    if isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [_canonical_call(c) if isinstance(c, dict) else c for c in out["tool_calls"]]
    return out


def _canonical_call(call: dict) -> dict:
    out = {k: call[k] for k in _CALL_KEYS if k in call}
    out.update((k, call[k]) for k in sorted(call) if k not in out)
    function = out.get("function")
    if isinstance(function, dict):
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        fixed = {"name": function.get("name"), "arguments": arguments} if "arguments" in function else {
            "name": function.get("name")}
        fixed.update((k, function[k]) for k in sorted(function) if k not in fixed)
        out["function"] = fixed
    return out
