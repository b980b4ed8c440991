"""The terminal renderer: a sink that shows loop events with rich.

Colours per role: the model's answer in the default colour, its reasoning dim italic,
tool calls cyan (one line: name + short arguments), results green (ok) or red, diffs
for approval coloured by line, warnings yellow. A spinner runs while the model thinks,
until its first streamed output. After each turn, one line of token usage.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from ctxagent.agent.events import (ApprovalRequest, Compaction, ErrorEvent, Event, ReasoningDelta, TextDelta,
                                   ToolCallEvent, ToolResultEvent, TurnEnd, TurnStart, UsageEvent)

#: Characters of tool arguments / results shown on their one line.
SHORT = 100
_PATCH_PATH = re.compile(r"^\*\*\* (Add|Update|Delete) File:\s*(.+)$", re.MULTILINE)


def short_args(name: str, raw: str) -> str:
    """One-line summary of a call's raw arguments: the command, the patched files, or compact JSON."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return _cut(raw.replace("\n", " "))
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        return _cut(args["command"])
    if isinstance(args, dict) and isinstance(args.get("patch"), str):
        files = [f"{op[0]} {path.strip()}" for op, path in _PATCH_PATH.findall(args["patch"])]
        return _cut(", ".join(files) or "(no files)")
    return _cut(json.dumps(args, ensure_ascii=False))


def _cut(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff_text(diff: str) -> Text:
    """A unified diff coloured per line: + green, - red, @@ cyan, headers bold."""
    out = Text()
    for line in diff.splitlines():
        style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                 else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        out.append(line + "\n", style=style)
    return out


class RichRenderer:
    """Sink for the terminal. `show_reasoning`: print reasoning deltas (dim) or hide them."""

    def __init__(self, console: Console | None = None, *, show_reasoning: bool = True) -> None:
        self.console = console or Console(highlight=False)
        self.show_reasoning = show_reasoning
        self._status: Status | None = None
        self._midline = False
        self._in_reasoning = False
        self.session_id = ""

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if event.type not in ("usage",):
            self._stop_spinner()
        if handler is not None:
            handler(event)

    def close(self) -> None:
        """Stop the spinner (call when the turn is abandoned)."""
        self._stop_spinner()

    def _spinner(self) -> None:
        if self._status is None and self.console.is_terminal:
            self._status = self.console.status("thinking…", spinner="dots")
            self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _newline(self) -> None:
        if self._midline:
            self.console.print()
            self._midline = False

    def _on_turn_start(self, event: TurnStart) -> None:
        self.session_id = event.session_id
        self._spinner()

    def _on_text_delta(self, event: TextDelta) -> None:
        if self._in_reasoning:
            self._newline()
            self._in_reasoning = False
        self.console.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
        self._midline = not event.text.endswith("\n")

    def _on_reasoning_delta(self, event: ReasoningDelta) -> None:
        if self.show_reasoning:
            self._in_reasoning = True
            self.console.print(Text(event.text, style="dim italic"), end="", soft_wrap=True)
            self._midline = not event.text.endswith("\n")

    def _on_tool_call(self, event: ToolCallEvent) -> None:
        self._newline()
        self.console.print(Text.assemble(("▸ ", "cyan"), (event.name, "bold cyan"), "  ",
                                         (short_args(event.name, event.arguments), "cyan")))

    def _on_approval_request(self, event: ApprovalRequest) -> None:
        self.console.print(diff_text(event.preview), end="")
        if event.auto:
            self.console.print(Text("  (approved: --yes / all)", style="dim"))

    def _on_tool_result(self, event: ToolResultEvent) -> None:
        lines = event.content.strip().splitlines() or [""]
        more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        mark, style = ("✓", "green") if event.ok else ("✗", "red")
        self.console.print(Text.assemble(("  " + mark + " ", style), (_cut(lines[0]), style), (more, "dim")))
        self._spinner()

    def _on_compaction(self, event: Compaction) -> None:
        self._newline()
        self.console.print(f"[yellow]context too long: compacted ({escape(event.method)}, "
                           f"{event.messages_before} → {event.messages_after} messages), retrying[/]")

    def _on_error(self, event: ErrorEvent) -> None:
        self._newline()
        self.console.print(f"[red]error:[/] {escape(event.message)}", soft_wrap=True)

    def _on_turn_end(self, event: TurnEnd) -> None:
        self._newline()
        if event.reason not in ("finished", "error"):
            self.console.print(f"[yellow]{escape(event.reason)}:[/] {escape(event.message)}", soft_wrap=True)
        self.console.print(Text(usage_line(event) + (f" · session {self.session_id}" if self.session_id else ""),
                                style="dim"))


def usage_line(event: TurnEnd) -> str:
    """`steps 3 · 12,345 tokens · $0.0123 · 4.2 s` for one turn."""
    parts = [f"steps {event.steps}", f"{event.tokens:,} tokens"]
    if event.cost_usd is not None:
        parts.append(f"${event.cost_usd:.4f}")
    parts.append(f"{event.elapsed_s:.1f} s")
    return " · ".join(parts)


def usage_totals(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum `usage` dicts (prompt/completion/cached tokens, cost) for `/usage`."""
    total = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": None}
    for usage in records:
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            total[key] += int(usage.get(key) or 0)
        if usage.get("cost_usd") is not None:
            total["cost_usd"] = (total["cost_usd"] or 0.0) + float(usage["cost_usd"])
    return total
