"""The report's layer figures (tester finding: budget == used for system, history and
tool_results, and budgets summing above the input budget, tool schemas outside).

Each layer's budget is what selection allowed it, fixed parts are marked fixed, the tool
schemas are their own fixed layer, and the figures partition the input budget: the
budgets (a shared budget counted once) add up to it, less the rounding of the shares, and
the used tokens add up to it with the unused room."""

from __future__ import annotations

import pytest

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket
from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.budget import classify_query, layer_budgets
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import rounds

COUNTER = TokenCounter("gpt-4o")
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a read-only command. " * 10,
                                           "parameters": {"type": "object",
                                                          "properties": {"command": {"type": "string"}}}}}]
QUERY = "What is the release tag of parse_cfg?"
HISTORY = [{"role": "user", "content": "We are preparing the parse_cfg release."},
           {"role": "assistant", "content": "Fine, the release notes come first. " * 8}] * 3
PACKETS = [ContextPacket("The release tag of parse_cfg is v9-TEST.", metadata={"type": "note", "id": "tag"}),
           ContextPacket("parse_cfg release notes: faster loading. " * 30, metadata={"type": "rag", "id": "notes"}),
           ContextPacket("Weather in Paris " * 100, metadata={"type": "rag", "id": "weather"}, relevance_score=0.01)]
SELECTED_LAYERS = ("memory", "evidence", "history", "tool_results")


def budgets_total(layers: dict) -> int:
    """Sum of the layers' budgets, a budget two layers share counted once."""
    total, seen = 0, set()
    for name, entry in layers.items():
        if entry.get("shared_with") not in seen:
            total += entry["budget"]
        seen.add(name)
    return total


def used_total(layers: dict) -> int:
    return sum(entry["used"] for entry in layers.values())


def build(mode: str, **config) -> dict:
    builder = ContextBuilder(config=ContextConfig(**{"max_tokens": 2000, **config}), counter=COUNTER)
    args = dict(user_query=QUERY, conversation_history=HISTORY, system_instructions="Be brief.", custom_packets=PACKETS)
    if mode == "messages":
        return builder.build_messages(**args, tools=TOOLS)[1]
    builder.build(**args)
    return builder.last_report


@pytest.mark.parametrize("mode", ["messages", "text"])
def test_builder_layers_partition_the_input_budget(mode: str) -> None:
    report = build(mode)
    budget, layers = report["budget"], report["layers"]
    total = budget["input_budget"]
    assert {name for name, e in layers.items() if e["fixed"]} == {"system", "tools", "current"}
    tools = COUNTER.count_tools(TOOLS) if mode == "messages" else 0
    assert layers["tools"] == {"budget": tools, "used": tools, "fixed": True}
    assert layers["system"]["budget"] == layers["system"]["used"] > 0
    assert budget["fixed_tokens"] == sum(layers[n]["budget"] for n in ("system", "tools", "current"))

    # each selected layer's budget is the share selection gave it, out of what the fixed parts left
    shares = layer_budgets(ContextConfig().layer_shares, total - budget["fixed_tokens"], classify_query(report["query"]))
    assert {n: layers[n]["budget"] for n in SELECTED_LAYERS} == shares
    assert layers["history"]["budget"] > layers["history"]["used"] > 0, "history has room: its bar is not full"
    assert 0 <= total - budgets_total(layers) < len(SELECTED_LAYERS), "only the shares' rounding is unassigned"

    assert budget["unused_tokens"] == total - budget["used_tokens"] > 0
    assert used_total(layers) + budget["unused_tokens"] == total
    rows = report["packets"]
    for name in SELECTED_LAYERS:
        assert layers[name]["used"] == sum(r["tokens"] for r in rows if r["layer"] == name and r["decision"] != "dropped")
    assert [r["tokens"] for r in rows if r["id"] in ("system", "current")] == [layers["system"]["used"],
                                                                               layers["current"]["used"]]
    assert "nothing was left out for lack of room" in budget["unused_note"]
    assert "history" in budget["unused_note"].split(";")[0], "the note names the layers that left room"


def test_a_layer_that_takes_room_others_left_shows_it_above_its_budget() -> None:
    shares = {"system": 0.1, "memory": 0.3, "evidence": 0.02, "history": 0.3, "tool_results": 0.3, "current": 0.1}
    report = build("messages", layer_shares=shares, adaptive_layers=False)
    layers = report["layers"]
    taken = [r for r in report["packets"] if r["reason"] == "fits budget left unused by other layers"]
    assert taken and {r["layer"] for r in taken} == {"evidence"}
    assert layers["evidence"]["used"] > layers["evidence"]["budget"]
    assert "taken from it by layers over their budget: evidence" in report["budget"]["unused_note"]
    assert used_total(layers) + report["budget"]["unused_tokens"] == report["budget"]["input_budget"]
    assert budgets_total(layers) <= report["budget"]["input_budget"]


def test_a_packet_left_out_for_room_is_named_in_the_unused_note() -> None:
    big = ContextPacket("parse_cfg release tag history " * 400, metadata={"type": "rag", "id": "huge"})
    builder = ContextBuilder(config=ContextConfig(max_tokens=1000, enable_compression=False), counter=COUNTER)
    _, report = builder.build_messages(QUERY, custom_packets=[big])
    assert [r["decision"] for r in report["packets"] if r["id"] == "huge"] == ["dropped"]
    assert "the 1 left out for lack of room needed more" in report["budget"]["unused_note"]


# -- the loop's assembler ------------------------------------------------------------------------

STATE = {"turn": 1, "todos": [{"content": "rename parse_cfg in src/", "status": "in_progress"}],
         "notes": [{"id": "n1", "title": "plan", "content": "parse_cfg has 40 callers"},
                   {"id": "n2", "title": "big", "content": "parse_cfg detail " * 600}],
         "memory_files": [{"path": "Memory.md", "content": "Prefer small patches."}]}


def assemble(window: int, history_rounds: int, tools: list[dict] = TOOLS):
    assembler = ContextAssembler(ModelSettings(model="gpt-4o", context_window=window, max_output_tokens=1000),
                                 counter=COUNTER, snapshots=False, load_state=None)
    history = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Rename parse_cfg."},
               *rounds(history_rounds, chars=2000)]
    return assembler.assemble(history, tools, STATE), assembler.budget()["limit"]


@pytest.mark.parametrize(("window", "history_rounds"), [(32_000, 2), (8000, 6), (3000, 6)])
def test_assembler_layers_partition_the_input_budget(window: int, history_rounds: int) -> None:
    request, limit = assemble(window, history_rounds)
    report = request.report
    budget, layers = report["budget"], report["layers"]
    assert budget["input_budget"] == limit
    assert {name for name, e in layers.items() if e["fixed"]} == {"system", "tools", "state", "framing"}
    assert layers["tools"] == {"budget": COUNTER.count_tools(TOOLS), "used": COUNTER.count_tools(TOOLS), "fixed": True}
    assert layers["framing"]["used"] >= 0
    # history and tool results share one budget: the room the rest leaves
    assert (layers["history"]["shared_with"], layers["tool_results"]["shared_with"]) == ("tool_results", "history")
    room = layers["history"]["budget"]
    assert room == layers["tool_results"]["budget"] > 0
    assert room != layers["history"]["used"] + layers["tool_results"]["used"], "the bar is not the size again"
    assert budgets_total(layers) == limit
    assert budget["used_tokens"] == COUNTER.count_messages(request.messages, TOOLS)
    assert used_total(layers) + budget["unused_tokens"] == limit
    for name in ("evidence", "memory"):
        assert layers[name]["used"] <= layers[name]["budget"]


def test_the_unused_note_says_what_the_loop_left_out() -> None:
    report = assemble(3000, 6)[0].report
    assert "compacted" in {r["reason"].split(":")[0] for r in report["packets"]}
    assert "history message(s) compacted" in report["budget"]["unused_note"]
    report = assemble(32_000, 2)[0].report
    assert report["budget"]["unused_note"].endswith("nothing was left out or shortened")
    assert "left by layers under their budget: " in report["budget"]["unused_note"]


def test_when_notes_and_memory_budgets_overcommit_a_small_window_the_note_says_so() -> None:
    """Many tool schemas in a small window: the fixed parts and the shares of the input
    budget given to notes and memory leave the history no budget of its own."""
    tools = [{"type": "function", "function": {"name": f"tool{i}", "description": "Does one thing well. " * 40,
                                               "parameters": {"type": "object", "properties": {}}}} for i in range(12)]
    request, limit = assemble(6000, 1, tools)
    layers, budget = request.report["layers"], request.report["budget"]
    over = budgets_total(layers) - limit
    assert layers["history"]["budget"] == 0 and over > 0
    assert f"exceed the room beside the fixed parts by {over:,} tokens" in budget["unused_note"]
    assert used_total(layers) + budget["unused_tokens"] == limit
