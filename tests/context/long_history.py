"""Builders of long chat histories for the compaction and assembler tests (plain data)."""

from __future__ import annotations

import json
from typing import Callable

C03_TASK = ("Task: rename function parse_cfg to parse_config across the repo. "
            "Note: the release tag is v9-TEST.")
C03_LAST = "Also update the changelog."
USELESS = '[assistant calls read_file] {"path":"a.py"}'


def call(call_id: str, name: str = "terminal", **args) -> dict:
    """One tool call entry of an assistant message."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def rounds(n: int, *, chars: int = 2000, start: int = 0, reasoning: bool = False, prefix: str = "call") -> list[dict]:
    """`n` rounds of assistant tool call + `chars`-character result (`cat src/mod<i>.py`)."""
    out: list[dict] = []
    for i in range(start, start + n):
        cid = f"{prefix}_{i}"
        assistant = {"role": "assistant", "content": None, "tool_calls": [call(cid, command=f"cat src/mod{i}.py")]}
        if reasoning:
            assistant["reasoning_content"] = f"I should read module {i} next."
        line = f"def parse_cfg_{i}(path):  # module {i}\n"
        out += [assistant, {"role": "tool", "tool_call_id": cid, "content": (line * (chars // len(line) + 1))[:chars]}]
    return out


def add_step(history: list[dict], n: int, step: tuple, words: Callable[[int, int], str]) -> None:
    """Append step `n` of a generated history (the property tests' hypothesis steps):
    ("user", n_words, seed), ("text", n_words, seed) or ("calls", [result sizes in
    characters], last_interrupted) with one result per call (the last left out when
    interrupted and there are several). `words(seed, n)` makes the text."""
    kind, a, b = step
    if kind == "user":
        history.append({"role": "user", "content": f"request {n}: " + words(b, a)})
    elif kind == "text":
        history.append({"role": "assistant", "content": words(b, a)})
    else:
        ids = [f"c{n}_{k}" for k in range(len(a))]
        history.append({"role": "assistant", "content": None, "tool_calls": [call(i, command=f"cat f{n}.py") for i in ids]})
        answered = ids[:-1] if b and len(ids) > 1 else ids
        history += [{"role": "tool", "tool_call_id": i, "content": words(size, size // 5)} for i, size in zip(answered, a)]


def c03_history(n_rounds: int = 40) -> list[dict]:
    """Case C03: the task, `n_rounds` rounds of 2,000-character results, the last request."""
    return [{"role": "user", "content": C03_TASK}, *rounds(n_rounds), {"role": "user", "content": C03_LAST}]


def tool_pairing_ok(messages: list[dict]) -> bool:
    """Every tool message answers a call of an earlier assistant message; the first
    non-system message is not a tool message; every call has a result (case C01)."""
    convo = [m for m in messages if m.get("role") != "system"]
    if convo and convo[0].get("role") == "tool":
        return False
    open_ids: set[str] = set()
    called: set[str] = set()
    for m in convo:
        if m.get("role") == "assistant":
            if open_ids:
                return False
            ids = {c["id"] for c in m.get("tool_calls") or []}
            open_ids, called = set(ids), called | ids
        elif m.get("role") == "tool":
            if m.get("tool_call_id") not in open_ids:
                return False
            open_ids.discard(m.get("tool_call_id"))
        elif open_ids:
            return False
    return not open_ids
