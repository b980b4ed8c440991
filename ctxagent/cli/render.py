"""The terminal renderer: a sink that shows loop events with rich (docs/cli.md, "How a turn looks").

Answer in the default colour (Markdown drawn live on a terminal, `cli.live`; plain text
elsewhere), reasoning dim italic, tool calls cyan on one line, results green or red
(`cli.results`), approval diffs coloured by line, spinners with elapsed seconds, one usage
line per turn. All text from the model, a tool or a file goes through `cli.safe_text`
(controls made visible, never markup) and `ctxagent.redaction` (secrets replaced; streamed
text through a `StreamRedactor`); a preview with control characters gets a warning line.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from rich.console import Console, Group
from rich.status import Status
from rich.syntax import Syntax
from rich.text import Text

from ctxagent.agent.events import (
    ApprovalRequest,
    Compaction,
    ErrorEvent,
    Event,
    Notice,
    ReasoningDelta,
    Retry,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
)
from ctxagent.cli.live import Elapsed, MarkdownStream
from ctxagent.cli.results import FOLD, cut, result_lines
from ctxagent.cli.safe_text import CONTROL_WARNING, has_controls, plain, visible
from ctxagent.cli.wrap import soft
from ctxagent.redaction import StreamRedactor, redact

_PATCH_PATH = re.compile(r"^\*\*\* (Add|Update|Delete) File:\s*(.+)$", re.MULTILINE)


def short_args(name: str, raw: str) -> str:
    """One-line summary of a call's raw arguments: the command, the patched files, or compact
    JSON; control characters made visible (redact `raw` before, so no key is half cut)."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return cut(visible(raw.replace("\n", " ")))
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        return cut(visible(args["command"]))
    if isinstance(args, dict) and isinstance(args.get("patch"), str):
        files = [f"{op[0]} {path.strip()}" for op, path in _PATCH_PATH.findall(args["patch"])]
        return cut(visible(", ".join(files) or "(no files)"))
    return cut(visible(json.dumps(args, ensure_ascii=False)))


def diff_text(diff: str) -> Text:
    """A unified diff coloured per line: + green, - red, @@ cyan, headers bold; control
    characters made visible (a `\\r` or `ESC [2K` cannot hide or redraw a line)."""
    out = Text()
    for line in visible(diff).split("\n")[: -1 if diff.endswith("\n") else None]:
        style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                 else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        out.append(line + "\n", style=style)
    return out


def approval_preview(preview: str, *, folded: bool = False) -> Text:
    """What the user approves: `diff_text(preview)`, below a yellow CONTROL_WARNING line when
    the preview holds control characters (shown escaped; the file gets them raw). `folded`
    (a diff already approved, shown for information): its first FOLD lines, then `... +N lines`."""
    out = Text()
    if has_controls(preview):
        out.append(CONTROL_WARNING + "\n", style="bold yellow")
    if folded and preview.count("\n") > FOLD + 1:
        lines = preview.rstrip("\n").split("\n")
        out.append_text(diff_text("\n".join(lines[:FOLD]) + "\n"))
        return out.append(f"... +{len(lines) - FOLD} lines\n", style="dim")
    return out.append_text(diff_text(preview))


def run_preview(subject: str, language: str, details: str) -> Group:
    """What the user approves before a command or python_exec runs: a yellow title, the
    `details` lines (cwd, sandbox, mode) and `subject` with syntax colours; control
    characters made visible (a warning line when there were any)."""
    title = {"bash": "run this command?", "python": "run this Python code?"}.get(language, "call this MCP tool?")
    parts: list[Any] = [Text(f"▸ {title}", style="bold yellow")]
    for line in details.splitlines():
        style = "bold red" if "NONE" in line or line.startswith("note:") else "dim"
        parts.append(Text("  " + visible(line), style=style))
    if has_controls(subject):
        parts.append(Text(CONTROL_WARNING, style="bold yellow"))
    parts.append(Syntax(visible(subject.rstrip("\n")), language, theme="ansi_dark", line_numbers=language == "python",
                        word_wrap=True, background_color="default"))
    return Group(*parts)


class RichRenderer:
    """Sink for the terminal. `show_reasoning`: print reasoning deltas (dim) or hide them.
    `secrets`: strings never printed (`Settings.secrets()`), shown as [REDACTED]."""

    def __init__(self, console: Console | None = None, *, show_reasoning: bool = True,
                 secrets: Iterable[str] = ()) -> None:
        self.console = console or Console(highlight=False)
        self.show_reasoning = show_reasoning
        self.secrets = list(secrets)
        self._stream = StreamRedactor(self.secrets)
        self._status: Status | None = None
        self._midline = False
        self._in_reasoning = False
        self._answer = ""  # the answer streamed so far, drawn by `_markdown` (terminal only)
        self._markdown: MarkdownStream | None = None
        self.session_id = ""

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if event.type not in ("usage",):
            self._stop_spinner()
        if event.type not in ("text_delta", "reasoning_delta", "usage"):
            self._flush_stream()
            self._end_answer()
        if handler is not None:
            handler(event)

    def close(self) -> None:
        """Show any held-back streamed text and stop the spinner (call when the turn is abandoned)."""
        self._flush_stream()
        self._end_answer()
        self._stop_spinner()

    def _clean(self, text: str) -> str:
        """Text from outside ctxagent, ready to print: secrets redacted, controls visible."""
        return visible(redact(text, self.secrets))

    def _spinner(self, label: str = "thinking…") -> None:
        if self._status is None and self._markdown is None and self.console.is_terminal:
            self._status = self.console.status(Elapsed(label), spinner="dots")
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
            self._flush_stream()
            self._end_answer()
            self._newline()
            self._in_reasoning = False
        self._print_streamed(self._stream.feed(event.text), "")

    def _on_reasoning_delta(self, event: ReasoningDelta) -> None:
        if self.show_reasoning:
            if not self._in_reasoning:
                self._flush_stream()
                self._end_answer()
            self._in_reasoning = True
            self._print_streamed(self._stream.feed(event.text), "dim italic")

    def _flush_stream(self) -> None:
        self._print_streamed(self._stream.flush(), "dim italic" if self._in_reasoning else "")

    def _print_streamed(self, text: str, style: str) -> None:
        if text and self.console.is_terminal:  # the answer as Markdown, reasoning as dim text: wrapped at words
            self._answer += text
            if self._markdown is None:
                self._newline()
                self._markdown = MarkdownStream(self.console, style=style or None)
            self._markdown.update(visible(self._answer))
        elif text:
            self.console.print(plain(text, style), end="", soft_wrap=True)
            self._midline = not text.endswith("\n")

    def _end_answer(self) -> None:
        """The answer (or reasoning) is complete, another event came: draw its last lines for good."""
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None
        self._answer = ""

    def _on_tool_call(self, event: ToolCallEvent) -> None:
        self._newline()
        self.console.print(Text.assemble(("▸ ", "cyan"), (event.name, "bold cyan"), "  ",
                                         (short_args(event.name, redact(event.arguments, self.secrets)), "cyan")))
        self._spinner(f"running {event.name}…")  # stopped by its approval request or its result

    def _on_approval_request(self, event: ApprovalRequest) -> None:
        self._newline()
        if event.language:  # a command or python_exec code
            # no soft_wrap: it crops a long line, and the user must see all of what they approve
            self.console.print(run_preview(redact(event.preview, self.secrets), event.language,
                                           redact(event.details, self.secrets)))
            if event.auto:
                self.console.print(Text(f"  (runs: {event.auto_reason})", style="dim"))
            return
        # soft_wrap: a long line is wrapped by the terminal, never split into what looks like two diff lines
        self.console.print(approval_preview(redact(event.preview, self.secrets), folded=event.auto), end="",
                           soft_wrap=True)
        if event.auto:
            self.console.print(Text("  (approved: --yes / all)", style="dim"))

    def _on_tool_result(self, event: ToolResultEvent) -> None:
        lines = result_lines(event.name, event.ok, self._clean(event.content))
        mark, style = ("✓", "green") if event.ok else ("✗", "red")
        body = Text(lines[0], style=style)
        for line in lines[1:]:  # a patch's other files, a board, the rest of an error
            body.append("\n" + line, style="dim" if line.startswith("... +") else "red" if not event.ok else "")
        out = Text()  # wrapped here, so a wrapped line stays under the text, not under the mark
        for n, line in enumerate(body.wrap(self.console, max(20, self.console.width - 4))):
            line.rstrip()
            out.append_text(Text.assemble("\n" if n else "", ("  " + mark + " ", style) if not n else "    ", line))
        self.console.print(out, soft_wrap=True)
        self._spinner()

    def _on_compaction(self, event: Compaction) -> None:
        self._newline()
        details = event.details or {}  # the context engine's record: counts of the context the model sees
        before, after = details.get("messages_before", event.messages_before), details.get("messages_after", event.messages_after)
        counts = f"{visible(event.method)}, {before} → {after} messages"
        if isinstance(details.get("tokens_before"), int) and isinstance(details.get("tokens_after"), int):
            counts += f", {details['tokens_before']:,} → {details['tokens_after']:,} tokens"
            if details["tokens_after"] >= details["tokens_before"]:  # said, not hidden (trial 12-02)
                counts += ": the summary is longer than what it replaced"
        counts = f"({counts})"
        if details.get("summary_error"):
            counts += f" (model summary not used: {self._clean(str(details['summary_error']))})"
        trigger = details.get("trigger")
        if trigger == "manual":
            line = f"compacted on request {counts}"
        elif trigger == "auto":
            line = f"context near the window: compacted {counts}"
        else:  # the server said the request was too long: compacted, and the call is sent again
            line = f"context too long: compacted {counts}, retrying"
        self.console.print(Text(line, style="yellow"))

    def _on_notice(self, event: Notice) -> None:
        self._newline()
        self.console.print(Text.assemble(("note:", "yellow"), " ", self._clean(event.message)), soft_wrap=soft(self.console))

    def _on_retry(self, event: Retry) -> None:
        self._newline()
        self.console.print(Text.assemble(("model:", "yellow"), " ", self._clean(event.message)), soft_wrap=soft(self.console))
        self._spinner()

    def _on_error(self, event: ErrorEvent) -> None:
        self._newline()
        self.console.print(Text.assemble(("error:", "red"), " ", self._clean(event.message)), soft_wrap=soft(self.console))

    def _on_turn_end(self, event: TurnEnd) -> None:
        self._newline()
        if event.reason not in ("finished", "error"):
            self.console.print(Text.assemble((f"{visible(event.reason)}:", "yellow"), " ", self._clean(event.message)),
                               soft_wrap=soft(self.console))
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
