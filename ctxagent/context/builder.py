"""ContextBuilder: the GSSC pipeline (gather, select, structure, compress).

Usage as in the Hello-Agents textbook (chapter 9, section 9.3.4): `build(...)` -> text,
`build_messages(...)` -> (messages, report). The request never exceeds
`config.input_budget` tokens by this builder's counter; required parts that alone do
not fit raise `ContextOverflowError` (docs/context.md).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from ctxagent.context import compress, structure
from ctxagent.context.gather import Gathered, gather
from ctxagent.context.messages import call_ids, history_units, last_user_text, split_current, strip_private
from ctxagent.context.packet import TYPE_LAYER, ContextConfig, ContextPacket, to_epoch
from ctxagent.context.record.report import fixed_layer, unused_note
from ctxagent.context.select import Candidate, score, select
from ctxagent.errors import ContextOverflowError
from ctxagent.text.collector import collector_paused
from ctxagent.text.statistics import analyse
from ctxagent.text.terms import terms
from ctxagent.text.tokens import TokenCounter

_SKELETON = {"State": [""], "Evidence": [""], "Context": [""]}


class ContextBuilder:
    """Builds one model call's context under a token budget. `memory_tool`/`rag_tool`: objects with
    `run(dict)` or None; `config`: a ContextConfig; `counter`: the target model's TokenCounter;
    `memory_limit`, `rag_limit`, `min_importance`: asked of the sources; `clock`: Unix seconds.
    `last_report` holds the last build's report. Reference: docs/context.md ("The builder's data and functions")."""

    def __init__(
        self,
        memory_tool: Any = None,
        rag_tool: Any = None,
        config: ContextConfig | None = None,
        *,
        counter: TokenCounter | None = None,
        model: str | None = None,
        memory_limit: int = 10,
        rag_limit: int = 5,
        min_importance: float = 0.3,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.memory_tool = memory_tool
        self.rag_tool = rag_tool
        self.config = config or ContextConfig()
        self.counter = counter or TokenCounter(model)
        self.memory_limit = memory_limit
        self.rag_limit = rag_limit
        self.min_importance = min_importance
        self.clock = clock
        self.last_report: dict | None = None

    def build(
        self,
        user_query: str,
        conversation_history: Iterable[Any] | None = None,
        system_instructions: str | list[str] | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
        additional_packets: Iterable[ContextPacket] | None = None,
    ) -> str:
        """The sectioned context text: [Role & Policies] [Task] [State] [Evidence] [Context]
        [Output], every section present. `additional_packets` (the name the textbook's
        9.4.4 listing uses) are added to `custom_packets`. Raises ValueError for an empty
        query and ContextOverflowError when instructions + query alone exceed the budget."""
        if not isinstance(user_query, str) or not user_query.strip():
            raise ValueError("user_query must be a non-empty string")
        custom = [*(custom_packets or []), *(additional_packets or [])]
        with collector_paused():
            run = _Run(self, "text", user_query, self._gather(user_query, conversation_history, system_instructions, custom), None)
            result = run.execute()
        self.last_report = run.report
        return result

    def build_messages(
        self,
        user_query: str | None = None,
        conversation_history: Iterable[Any] | None = None,
        system_instructions: str | list[str] | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
        *,
        tools: list[dict] | None = None,
        additional_packets: Iterable[ContextPacket] | None = None,
    ) -> tuple[list[dict], dict]:
        """OpenAI chat messages (role-valid, pairing-valid) and the report: system, the selected
        history (task pinned, a call and its results together), then the current request with
        State/Evidence/Context in front of it. `user_query` None: the history's last user message.
        The report's keys and layers are in docs/context.md ("The builder's data and functions")."""
        query = user_query if isinstance(user_query, str) and user_query.strip() else None
        custom = [*(custom_packets or []), *(additional_packets or [])]  # additional_packets: the textbook's name
        gathered = self._gather(query or last_user_text(conversation_history), conversation_history, system_instructions, custom)
        with collector_paused():
            run = _Run(self, "messages", query, gathered, tools)
            messages = run.execute()
        self.last_report = run.report
        return messages, run.report

    def _gather(self, query: str, history: Any, system: Any, custom: Any) -> Gathered:
        return gather(
            query, history, system, custom, memory_tool=self.memory_tool, rag_tool=self.rag_tool,
            memory_limit=self.memory_limit, rag_limit=self.rag_limit, min_importance=self.min_importance,
            tool_result_max_chars=self.config.tool_result_max_chars,
        )


class _Run:
    """One build: the split into required parts and candidates, selection, rendering."""

    def __init__(self, builder: ContextBuilder, mode: str, query: str | None, gathered: Gathered, tools: list[dict] | None):
        self.mode, self.tools, self.gathered = mode, tools, gathered
        self.counter, self.config, self.now = builder.counter, builder.config, builder.clock()
        self._seps: dict[str, int] = {}
        self._last: tuple[tuple[str, ...], Any, int] | None = None
        self.instructions: list[str] = []
        task_parts: list[str] = []
        others: list[tuple[ContextPacket, str]] = []  # the candidate packets and their types
        for packet in gathered.packets:
            kind = packet.type
            layer = TYPE_LAYER.get(kind, "evidence")  # packet.layer, without asking for the type again
            if layer == "system":
                self.instructions.append(packet.content)
            elif layer == "current":
                task_parts.append(packet.content)
            else:
                others.append((packet, kind))
        before, self.current, turn = split_current(gathered.history, query)
        self.task = "\n\n".join([_text_of(self.current), *task_parts])
        self.cands = self._unit_cands(before, turn) + self._packet_cands(others)
        self.report: dict = {}

    def execute(self) -> Any:
        cfg = self.config
        fixed = self._fixed_tokens()
        available = cfg.input_budget - fixed
        if available < 0:
            raise ContextOverflowError(
                f"system instructions and the current request need {fixed} tokens but the input budget is "
                f"{cfg.input_budget} (max_tokens {cfg.max_tokens} minus {cfg.reserve_tokens} reserved for the reply); "
                "shorten them or raise max_tokens"
            )
        self._score()
        truncate = compress.make_truncator(self.counter, self._cost, structure.packet_text)
        figures = select(self.cands, available, cfg, self.task, truncate=truncate, recount=self._cost)
        dropped = compress.enforce_budget(lambda: self._rendered()[1], self.cands, cfg.input_budget)
        result, used = self._rendered()
        if used > cfg.input_budget:
            raise ContextOverflowError(f"the pinned context needs {used} tokens, over the input budget of {cfg.input_budget}")
        self.report = self._report(figures, fixed, used, dropped)
        return result

    # --- candidates -------------------------------------------------------------------
    def _unit_cands(self, before: list[dict], turn: list[dict]) -> list[Candidate]:
        units = history_units(before)
        first_user = next((i for i, u in enumerate(units) if u[0].get("role") == "user"), None)
        cands = [self._unit_cand(u, i, pinned=i == first_user, source="history") for i, u in enumerate(units)]
        cands += [self._unit_cand(u, 10**6 + j, pinned=True, source="current turn") for j, u in enumerate(history_units(turn))]
        return cands

    def _unit_cand(self, unit: list[dict], order: int, *, pinned: bool, source: str) -> Candidate:
        is_call = bool(call_ids(unit[0]))
        cand = Candidate(
            id=f"{'turn' if order >= 10**6 else 'msg'}-{order % 10**6}", layer="tool_results" if is_call else "history",
            type="tool_call" if is_call else "history", text=structure.unit_text(unit), cost=0,
            timestamp=float(unit[0].get("timestamp") or self.now), unit=unit, order=order, pinned=pinned, source=source,
        )
        cand.cost = self._cost(cand)
        return cand

    def _packet_cands(self, packets: list[tuple[ContextPacket, str]]) -> list[Candidate]:
        """Candidates for (packet, its type) pairs; their cost is the separator until `_score`
        adds a lower bound of the text's tokens (`select` counts exactly only those that might fit)."""
        cands = []
        kinds: dict[str, tuple[str, int]] = {}  # type -> (layer, separator tokens)
        for i, (packet, kind) in enumerate(packets):
            meta = packet.metadata
            layer, sep = kinds.get(kind) or kinds.setdefault(kind, (TYPE_LAYER.get(kind, "evidence"),
                                                                    self._sep_tokens(structure.section_of(kind))))
            # The fields without defaults by position, the others set after: keyword
            # arguments would cost a dict per candidate (a quarter of this loop's time).
            cand = Candidate(str(meta.get("id") or f"{kind}-{i}"), layer, kind, structure.packet_text(packet, kind),
                             sep, to_epoch(packet.timestamp))  # id, layer, type, text, cost, timestamp
            cand.packet, cand.order, cand.exact = packet, i, False
            cand.pinned, cand.source = bool(meta.get("pinned")), str(meta.get("source") or "custom")
            cands.append(cand)
        return cands

    def _score(self) -> None:
        """Relevance, recency and score of every candidate, and the token lower bound of
        every packet, from one pass over the texts (`ctxagent.text.statistics.analyse`)."""
        raw, facts = analyse([c.text for c in self.cands], terms(self.task))
        floor = self.counter.floor
        for cand, known in zip(self.cands, facts):
            if not cand.exact:
                cand.cost += floor(known.pieces, known.value)
        score(self.cands, self.task, self.config, self.now, raw=raw)

    def _cost(self, cand: Candidate) -> int:
        """Tokens `cand` adds: its messages (messages mode) or its rendered line plus separator."""
        if cand.unit is not None and self.mode == "messages":
            return sum(self.counter.count_message(strip_private(m)) for m in cand.unit)
        if cand.unit is not None:
            return self.counter.count(structure.unit_text(cand.unit)) + self._sep_tokens("Context")
        return self.counter.count(cand.text) + self._sep_tokens(structure.section_of(cand.type))

    def _sep_tokens(self, section: str) -> int:
        if section not in self._seps:
            self._seps[section] = self.counter.count(structure.separator(section))
        return self._seps[section]

    # --- rendering ----------------------------------------------------------------------
    def _fixed_tokens(self) -> int:
        if self.mode == "text":
            return self.counter.count(structure.render_text({"Role & Policies": self.instructions}, self.task, self.config.output_instructions))
        skeleton = [*self._system_msgs(), self._current_msg(_SKELETON)]
        return self.counter.count_messages(skeleton, self.tools)

    def _render(self) -> Any:
        live = [c for c in self.cands if c.decision != "dropped"]
        packets = sorted((c for c in live if c.packet is not None), key=_packet_order)
        sections = structure.group_sections(c.packet for c in packets)
        units = sorted((c for c in live if c.unit is not None), key=lambda c: c.order)
        if self.mode == "text":
            sections["Role & Policies"] = self.instructions
            history = [structure.unit_text(c.unit) for c in units]
            sections["Context"] = history + sections["Context"]
            return structure.render_text(sections, self.task, self.config.output_instructions)
        before = [strip_private(m) for c in units if c.order < 10**6 for m in c.unit]
        after = [strip_private(m) for c in units if c.order >= 10**6 for m in c.unit]
        return [*self._system_msgs(), *before, self._current_msg(sections), *after]

    def _system_msgs(self) -> list[dict]:
        return [{"role": "system", "content": "\n\n".join(self.instructions)}] if self.instructions else []

    def _current_msg(self, sections: dict[str, list[str]]) -> dict:
        msg = strip_private(dict(self.current))
        content = msg.get("content")
        if isinstance(content, list):
            block = structure.render_block(sections, "(the request follows)")
            msg["content"] = content if block == "(the request follows)" else [{"type": "text", "text": block}, *content]
        else:
            msg["content"] = structure.render_block(sections, self.task)
        return msg

    def _rendered(self) -> tuple[Any, int]:
        """The request as the candidates' decisions stand, and its tokens (kept until a decision changes)."""
        key = tuple(c.decision for c in self.cands)
        if self._last is None or self._last[0] != key:
            rendered = self._render()
            self._last = (key, rendered, self._measure(rendered))
        return self._last[1], self._last[2]

    def _measure(self, rendered: Any) -> int:
        if self.mode == "text":
            return self.counter.count(rendered)
        return self.counter.count_messages(rendered, self.tools)

    def _report(self, figures: dict, fixed: int, used: int, dropped: list[str]) -> dict:
        cfg = self.config
        system, tools = self._system_tokens(), self.counter.count_tools(self.tools)
        layers = {"system": fixed_layer(system), "tools": fixed_layer(tools)}
        for name, entry in figures["layers"].items():
            layers[name] = {"budget": entry["budget"], "used": 0, "fixed": False}
        for cand in self.cands:
            if cand.decision != "dropped":
                layers[cand.layer]["used"] += cand.cost
        # The request itself (with its section headers and the reply primer): set aside before
        # selection, and what the whole request as sent costs beyond the layers' parts.
        current = used - sum(e["used"] for e in layers.values())
        layers["current"] = fixed_layer(fixed - system - tools, current)
        return {
            "version": 1, "mode": self.mode, "model": self.counter.model, "exact": self.counter.exact,
            "query": self.task[:500], "query_type": figures["query_type"],
            "budget": {
                "max_tokens": cfg.max_tokens, "reserve_tokens": cfg.reserve_tokens, "input_budget": cfg.input_budget,
                "fixed_tokens": fixed, "tools_tokens": tools, "used_tokens": used,
                "unused_tokens": cfg.input_budget - used, "unused_note": unused_note(layers, self._unused_why(dropped)),
            },
            "layers": layers, "sources": self.gathered.sources,
            "packets": [*self._required_rows(system, current), *(c.row() for c in self.cands)],
            "final_fit_dropped": dropped,
        }

    def _system_tokens(self) -> int:
        """Tokens of the instructions as sent: the system message, or their text in the template."""
        if not self.instructions:
            return 0
        if self.mode == "messages":
            return self.counter.count_message(self._system_msgs()[0])
        return self.counter.count("\n\n".join(self.instructions))

    def _unused_why(self, dropped: list[str]) -> str:
        """Why nothing else filled the room left: the second pass offered it to all that was left out."""
        short = sum(1 for c in self.cands if c.decision == "dropped" and c.reason.startswith("over"))
        why = (f"the second pass offered it to everything left out; the {short} left out for lack of room needed more"
               if short else "nothing was left out for lack of room")
        return why + (f"; {len(dropped)} removed in the final fit" if dropped else "")

    def _required_rows(self, system_tokens: int, current_tokens: int) -> list[dict]:
        """Report rows for the parts that are never selected against: instructions, request."""
        rows = []
        if self.instructions:
            rows.append(_fixed_row("system", "system", "instructions", system_tokens, "system instructions: always kept",
                                   "\n\n".join(self.instructions)))
        rows.append(_fixed_row("current", "current", "task", current_tokens, "current request: always last, never cut", self.task))
        return rows


def _fixed_row(pid: str, layer: str, kind: str, tokens: int, reason: str, text: str) -> dict:
    return {"id": pid, "layer": layer, "type": kind, "source": layer, "tokens": tokens, "relevance": 1.0, "recency": 1.0,
            "score": 1.0, "pinned": True, "decision": "selected", "reason": reason, "preview": " ".join(text[:200].split())}


def _packet_order(cand: Candidate) -> tuple:
    keep_order = structure.section_of(cand.type) == "State"
    return (0, cand.order) if keep_order else (-cand.score, cand.order)


def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")
