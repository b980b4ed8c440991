"""Golden renderings of what the model sees (issue 10): one file per request in
tests/context/layouts/, compared byte for byte. After an intended change of layout,
regenerate with `python -m pytest tests/context/test_layouts.py --write-layouts` and
review the diff of the .txt files (docs/context.md, "Request layouts")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.compactor import CompactionConfig
from ctxagent.llm.settings import ModelSettings
from ctxagent.protocols.xml import XmlProtocol
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import C03_TASK, rounds

LAYOUTS = Path(__file__).parent / "layouts"
COUNTER = TokenCounter("gpt-4o-mini")
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a read-only command.",
                                           "parameters": {"type": "object",
                                                          "properties": {"command": {"type": "string"}}}}}]
STATE = {"session_id": "layout", "turn": 1, "step": 1, "task": C03_TASK,
         "todos": [{"content": "rename parse_cfg in src/", "status": "in_progress"}]}


def render(messages: list[dict]) -> str:
    """The request as text: one block per message (index, role, text, tool calls with their
    arguments); no timestamps, no ids of our own, so equal requests render equal."""
    blocks = []
    for index, message in enumerate(messages):
        head = f"=== [{index}] {message['role']}"
        if message.get("tool_call_id"):
            head += f" (result of {message['tool_call_id']})"
        lines = [head]
        if message.get("reasoning_content"):
            lines.append(f"[reasoning] {message['reasoning_content']}")
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(part.get("text", json.dumps(part, sort_keys=True)) for part in content)
        if content:
            lines.append(content.rstrip("\n"))
        for call in message.get("tool_calls") or ():
            function = call["function"]
            lines.append(f"-> {function['name']}({function['arguments']}) id={call['id']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def summarize(messages: list[dict], tools: list[dict] | None = None) -> str:
    """A model summary determined by its request (deterministic)."""
    tag = hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:10]
    return ("## Goal\n- Rename parse_cfg to parse_config\n## Progress and decisions\n"
            f"- Read the modules so far, summary {tag}\n## Constraints and preferences\n- (none)\n"
            "## Key facts\n- parse_cfg lives in src/config.py\n## Current state\n- reading modules\n"
            "## Next steps\n- rename\n")


def make(*, window: int = 8000, views: list | None = None, **kw) -> ContextAssembler:
    """An assembler with no snapshots and no repository state (the state comes in `STATE`)."""
    return ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=1000),
                            counter=COUNTER, snapshots=False, load_state=None,
                            on_view=None if views is None else views.append, **kw)


def first_call() -> list[dict]:
    history = [SYSTEM, {"role": "user", "content": C03_TASK}]
    return make().assemble(history, TOOLS, dict(STATE)).messages


def after_masking() -> list[dict]:
    history = [SYSTEM, {"role": "user", "content": C03_TASK}, *rounds(12, chars=1500)]
    # masking alone: the masked history fits the verbatim tail, so there is nothing to summarize
    request = make(config=CompactionConfig(target_ratio=0.6, tail_ratio=0.6)).assemble(history, TOOLS, dict(STATE))
    assert request.report["compaction"]["method"] == "masking", request.report["compaction"]
    return request.messages


def _compacted(views: list) -> tuple[list[dict], list[dict]]:
    history = [SYSTEM, {"role": "user", "content": C03_TASK}, *rounds(30, chars=1500)]
    request = make(views=views, summarize=summarize, config=CompactionConfig(target_ratio=0.3)).assemble(
        history, TOOLS, dict(STATE))
    assert request.report["compaction"]["method"] not in (None, "masking"), request.report["compaction"]
    return history, request.messages


def after_compaction() -> list[dict]:
    return _compacted([])[1]


def resumed_session() -> list[dict]:
    views: list = []
    history, _ = _compacted(views)
    history = [*history, {"role": "user", "content": "Go on with the rename."}]
    assembler = make(summarize=summarize, config=CompactionConfig(target_ratio=0.3),
                     resume=json.loads(json.dumps(views[-1])))
    return assembler.assemble(history, TOOLS, {**STATE, "turn": 2}).messages


def xml_after_masking() -> list[dict]:
    """`after_masking` as the XML protocol sends it (docs/protocols.md): the history as text,
    the tool guide in the system message, observations as user messages."""
    messages, tools = XmlProtocol().encode(after_masking(), TOOLS)
    assert tools is None
    return messages


CASES = {"first_call": first_call, "after_masking": after_masking,
         "after_compaction": after_compaction, "resumed_session": resumed_session,
         "xml_after_masking": xml_after_masking}


@pytest.mark.parametrize("name", sorted(CASES))
def test_request_layout_matches_its_golden_file(name, write_layouts):
    text = render(CASES[name]())
    golden = LAYOUTS / f"{name}.txt"
    if write_layouts:
        LAYOUTS.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
        return
    assert golden.exists(), f"{golden} is missing: run pytest {__file__} --write-layouts"
    assert text == golden.read_text(encoding="utf-8"), (
        f"the request layout {name} changed; if intended, run "
        f"`python -m pytest tests/context/test_layouts.py --write-layouts` and review the diff")


def test_rendering_is_deterministic():
    assert render(after_compaction()) == render(after_compaction())
