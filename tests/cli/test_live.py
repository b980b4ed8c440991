"""The live display on a terminal (issue 15, item 16): the answer drawn as Markdown while it
streams and wrapped at word boundaries, spinners with elapsed seconds, plain text off a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from ctxagent.agent.events import TextDelta, ToolCallEvent, ToolResultEvent, TurnEnd, TurnStart
from ctxagent.cli.live import WINDOW, Elapsed, MarkdownStream
from ctxagent.cli.render import RichRenderer
from tests.support.screen import screen

ANSWER = ("## Plan\n\n1. read **filesize.py**\n2. patch `decimal()`\n\n" + "wonderful " * 20 + "end.\n\n"
          + "".join(f"- item {i}\n" for i in range(12)))


def terminal(width: int = 40) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="standard")


def feed(console: Console, *events) -> list[str]:
    renderer = RichRenderer(console)
    for event in events:
        renderer(event)
    return screen(console.file.getvalue().replace("\r\n", "\n"))


def deltas(text: str, size: int = 3) -> list[TextDelta]:
    return [TextDelta(text=text[i:i + size]) for i in range(0, len(text), size)]


def test_the_streamed_answer_ends_as_rendered_markdown_wrapped_at_words() -> None:
    lines = feed(terminal(), TurnStart(session_id="s", turn=1, task="t"), *deltas(ANSWER),
                 TurnEnd(reason="finished", steps=1, tokens=5, elapsed_s=1.0))
    shown = "\n".join(lines)
    assert "Plan" in shown and "##" not in shown and "**" not in shown and "`" not in shown
    assert " 1 read filesize.py" in lines and " 2 patch decimal()" in lines and "• item 11" in shown
    assert sum(line.split().count("wonderful") for line in lines) == 20
    assert all(len(line) <= 40 for line in lines)
    assert [line for line in lines if "item" in line] == [f" • item {i}" for i in range(12)]  # each once
    assert "thinking…" not in shown  # the spinner is gone


def test_text_before_a_tool_call_is_drawn_before_the_call_line() -> None:
    lines = feed(terminal(), *deltas("Looking at **it**."),
                 ToolCallEvent(call_id="c", name="terminal", arguments='{"command": "ls"}', step=1),
                 ToolResultEvent(call_id="c", name="terminal", ok=True, content="a"))
    assert lines[:3] == ["Looking at it.", "▸ terminal  ls", "  ✓ a"]


def test_a_spinner_runs_while_a_tool_runs_and_is_cleared() -> None:
    console = terminal()
    lines = feed(console, ToolCallEvent(call_id="c", name="terminal", arguments='{"command": "ls"}', step=1),
                 ToolResultEvent(call_id="c", name="terminal", ok=True, content="a"))
    assert "running terminal…" in console.file.getvalue()  # drawn at least once (Live draws when it stops)
    assert "running terminal…" not in "\n".join(lines)


def test_elapsed_shows_whole_seconds_after_the_first() -> None:
    console = Console(file=io.StringIO(), width=40)
    label = Elapsed("thinking…")
    console.print(label)
    label.started -= 12.4
    console.print(label)
    assert console.file.getvalue().split("\n")[:2] == ["thinking…", "thinking… 12 s"]


def test_markdown_stream_prints_lines_above_its_window_once() -> None:
    console = terminal(60)
    stream = MarkdownStream(console)
    text = ""
    for i in range(WINDOW * 3):
        text += f"line {i}\n\n"
        stream.drawn = 0.0  # draw at every update, whatever the clock says
        stream.update(text)
    stream.close()
    stream.close()
    lines = [line for line in screen(console.file.getvalue().replace("\r\n", "\n")) if line]
    assert lines == [f"line {i}" for i in range(WINDOW * 3)]


def test_off_a_terminal_the_answer_is_the_plain_streamed_text() -> None:
    console = Console(file=io.StringIO(), width=40, force_terminal=False)
    feed(console, *deltas(ANSWER), TurnEnd(reason="finished", steps=1, tokens=5, elapsed_s=1.0))
    assert console.file.getvalue().startswith(ANSWER)


def test_reasoning_is_wrapped_at_words_then_the_answer_follows() -> None:
    from ctxagent.agent.events import ReasoningDelta

    thought = "considering " * 9 + "**not markdown**"
    lines = feed(terminal(), *[ReasoningDelta(text=thought[i:i + 4]) for i in range(0, len(thought), 4)],
                 *deltas("Done."), TurnEnd(reason="finished", steps=1, tokens=5, elapsed_s=1.0))
    assert sum(line.split().count("considering") for line in lines) == 9
    assert "**not markdown**" in "\n".join(lines)  # reasoning is shown as written
    assert "Done." in lines and all(len(line) <= 40 for line in lines)
