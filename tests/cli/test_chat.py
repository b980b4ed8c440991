"""The chat REPL and slash commands, driven with a real agent against the fake server."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ctxagent.cli.chat_cmd import read_message, repl
from ctxagent.cli.render import RichRenderer
from ctxagent.cli.slash import register_slash
from tests.support.fake_openai import text, tool_calls


def reader(lines: list[str]):
    items = iter(lines)

    def read(prompt: str) -> str:
        item = next(items, None)
        if item is None:
            raise EOFError
        if isinstance(item, BaseException):
            raise item
        return item

    return read


def console() -> Console:
    return Console(file=io.StringIO(), width=120)


def test_backslash_continues_a_message() -> None:
    assert read_message(reader(["first\\", "second\\", "third"])) == "first\nsecond\nthird"
    assert read_message(reader(["one"])) == "one"


def test_repl_runs_turns_handles_ctrl_c_at_prompt_and_slash_commands(make_agent) -> None:
    agent, server, _ = make_agent([text("hi back"), tool_calls([("echo", '{"text": "x"}')]), text("done")])
    out = console()
    renderer = RichRenderer(out)
    agent.sinks.append(renderer)
    repl(agent, reader(["hello", KeyboardInterrupt(), "", "/usage", "/nosuch", "use echo", "/context", "/help",
                        "/exit", "never sent"]), out, renderer)
    printed = out.file.getvalue()
    assert "hi back" in printed and "1 turns" in printed and "unknown command /nosuch" in printed
    assert "▸ echo" in printed
    assert "/compact" in printed and "/context" in printed
    assert [m["content"] for m in agent.session.history if m["role"] == "user"] == ["hello", "use echo"]
    assert len(server.requests) == 3


def test_compact_slash_masks_old_outputs(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("echo", '{"text": "%s"}' % ("x" * 1000))]), text("a"),
                              tool_calls([("echo", '{"text": "y"}')]), text("b")])
    agent.run_turn("one")
    agent.run_turn("two")
    out = console()
    renderer = RichRenderer(out)
    agent.sinks.append(renderer)  # as `ctxagent chat` does (open_agent(sinks=[renderer])): it shows the compaction
    repl(agent, reader(["/compact"]), out, renderer)
    tool_contents = [m["content"] for m in agent.session.history if m["role"] == "tool"]
    assert tool_contents[0].startswith("[observation masked: echo") and tool_contents[1] == "echo: y"
    assert "x" * 100 not in tool_contents[0]
    assert [line for line in out.file.getvalue().splitlines() if "compacted" in line] == [
        "compacted on request (mask, 9 → 9 messages)"]


def test_slash_commands_can_be_added(make_agent) -> None:
    agent, _, _ = make_agent([])
    seen = []
    register_slash("ping", "test command", lambda ctx, arg: seen.append(arg))
    out = console()
    repl(agent, reader(["/ping some arg"]), out, RichRenderer(out))
    assert seen == ["some arg"]


@pytest.mark.parametrize("line", ["/exit", "/quit"])
def test_exit_commands_end_the_repl(make_agent, line: str) -> None:
    agent, server, _ = make_agent([])
    repl(agent, reader([line, "not read"]), console(), RichRenderer(console()))
    assert server.requests == []


def test_secrets_never_reach_the_chat_input_history(tmp_path) -> None:
    """F7: what you type at the chat prompt is kept in .ctxagent/chat_history with the key redacted."""
    from ctxagent.cli.chat_cmd import _redacted_history

    key = "sk-CHATSECRET0123456789abcdef"
    history = _redacted_history(tmp_path / "chat_history", [key])
    history.append_string(f"my key is {key}")
    history.append_string("plain line")
    stored = (tmp_path / "chat_history").read_text(encoding="utf-8")
    assert key not in stored and "my key is [REDACTED]" in stored and "plain line" in stored
