"""On a terminal: spinner labels with elapsed time, and streamed text drawn as it grows.

`MarkdownStream` re-renders the whole answer (rich's Markdown; the reasoning as dim text)
at the console's width at each delta, so words are never cut at the edge. Lines above the
last WINDOW are final and printed once; the last WINDOW stay in a `rich.live.Live` region
that is redrawn (never taller than the screen, so nothing is printed twice); `close()`
prints the rest.
"""

from __future__ import annotations

import time

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

#: Lines of the answer kept redrawable at its end (a list or a table may still change there).
WINDOW = 6
#: Least seconds between two redraws (each renders the whole answer again).
REDRAW_S = 0.05


class Elapsed:
    """A spinner label: `label` and the whole seconds since it was made (`thinking… 12 s`)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        seconds = int(time.monotonic() - self.started)
        yield Text(f"{self.label} {seconds} s" if seconds else self.label, style="dim")


class MarkdownStream:
    """The answer's Markdown, drawn as it grows: `update(text)` with the whole text so far,
    `close()` when it is complete (prints what is left; safe to call twice). `style`: draw
    the text as plain text in that style instead (the model's reasoning: "dim italic")."""

    def __init__(self, console: Console, *, style: str | None = None) -> None:
        self.console = console
        self.style = style
        self.text = ""
        self.printed = 0  # lines already printed above the live region, for good
        self.live: Live | None = None
        self.drawn = 0.0  # time.monotonic() of the last redraw

    def update(self, text: str) -> None:
        self.text = text
        now = time.monotonic()
        if self.live is not None and now - self.drawn < REDRAW_S:
            return  # drawn at the next delta, or by close()
        self.drawn = now
        lines = self._lines()
        stable = max(self.printed, len(lines) - WINDOW)
        if self.live is None:
            self.live = Live(Text(""), console=self.console, auto_refresh=False, transient=True)
            self.live.start()
        if stable > self.printed:
            self.live.console.print(Text("\n").join(lines[self.printed:stable]))
            self.printed = stable
        self.live.update(Text("\n").join(lines[stable:]), refresh=True)

    def close(self) -> None:
        if self.live is None:
            return
        lines = self._lines()
        self.live.update(Text(""), refresh=True)
        self.live.stop()
        self.live = None
        if lines[self.printed:]:
            self.console.print(Text("\n").join(lines[self.printed:]))
        self.printed = len(lines)

    def _lines(self) -> list[Text]:
        """The answer rendered at the console's width, one Text per line (trailing blank lines dropped)."""
        shown = Text(self.text, style=self.style) if self.style else Markdown(self.text)
        rendered = self.console.render_lines(shown, self.console.options, pad=False)
        lines = [Text.assemble(*((s.text, s.style) for s in line if not s.control)) for line in rendered]
        for line in lines:
            line.rstrip()
        while lines and not lines[-1].plain.strip():
            lines.pop()
        return lines
