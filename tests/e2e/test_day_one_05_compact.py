"""Issue 15, item 5: a compaction that does nothing is not one, with the real CLI and the fake server.

`/compact` on a short chat writes a summary (one summary request, the next request carries
it); with nothing to summarize it says "nothing to compact: N% of the window" and changes
nothing; an automatic compaction that would free nothing is neither announced nor recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import text

PROMPT = "You are compacting"  # the first words of the compaction prompt
SUMMARY = ("## Goal\n- Answer the user's questions about greet (SUMMARY-5c1d)\n## Progress and decisions\n"
           "- Explained greet and its test\n## Constraints and preferences\n- (none)\n## Key facts\n"
           "- src/app.py defines greet\n## Current state\n- questions answered\n## Next steps\n- wait for the user\n")


def _config(env: dict[str, str], body: str = "") -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[agent]\ntools = ["terminal"]\nepisodic_memory = false\n' + body, encoding="utf-8")


def _records(repo: Path) -> list[dict]:
    [path] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _events(repo: Path, kind: str) -> list[dict]:
    return [r["event"] for r in _records(repo) if r["kind"] == "event" and r["event"]["type"] == kind]


def _summary_requests(bodies: list[dict]) -> list[dict]:
    return [b for b in bodies if any(PROMPT in str(m.get("content")) for m in b["messages"])]


def test_compact_on_a_short_chat_writes_a_summary(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    answers = [text(f"Answer {i}: greet returns hello plus the name.") for i in range(5)]
    server = fake_server([*answers, text("After the summary.")], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    questions = "".join(f"question {i} about greet?\n" for i in range(5))
    proc = ctxagent("chat", "--repo", str(repo), input=f"{questions}/compact\nand now?\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    out = flat(proc.stdout)
    assert "compacted on request (llm, 10 → 4 messages" in out, out
    assert "tokens: the summary is longer than what it replaced)" in out  # said, not hidden (trial 12-02)
    assert "(masking" not in out and "nothing to compact" not in out
    bodies = server.requests()
    assert len(_summary_requests(bodies)) == 1, "one summary request"
    last = bodies[-1]["messages"]
    assert any("SUMMARY-5c1d" in str(m.get("content")) for m in last), "the next request carries the summary"
    assert len(last) < 12 and last[-1]["content"].startswith("and now?")
    [event] = _events(repo, "compaction")
    assert event["details"]["trigger"] == "manual" and event["details"]["method"] == "llm"


def test_compact_with_nothing_to_summarize_says_so_and_changes_nothing(ctxagent, fake_server, repo: Path,
                                                                       env) -> None:
    _config(env, "[model]\ncontext_window = 32000\n")
    server = fake_server([text("Hello!"), text("Still here.")], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    proc = ctxagent("chat", "--repo", str(repo), input="hi\n/compact\nagain\n/exit\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    out = flat(proc.stdout)
    assert "nothing to compact: 1% of the window" in out or "nothing to compact: 2% of the window" in out, out
    assert "compacted" not in out
    bodies = server.requests()
    assert not _summary_requests(bodies) and len(bodies) == 2
    assert [m["content"] for m in bodies[1]["messages"][1:3]] == ["hi", "Hello!"], "the history is unchanged"
    assert not _events(repo, "compaction") and [r for r in _records(repo) if r["kind"] == "history"] == []


def test_an_automatic_compaction_that_frees_nothing_is_not_announced(ctxagent, fake_server, repo: Path,
                                                                     env) -> None:
    """A task that alone passes the threshold: nothing to mask, nothing to summarize."""
    _config(env, "[model]\ncontext_window = 4000\nmax_output_tokens = 500\n")
    task = "Review this text: " + " ".join(f"word{i}" for i in range(1100))
    server = fake_server([text("Reviewed.")], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    proc = ctxagent("run", task, "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    printed = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert "compaction" not in printed and not _events(repo, "compaction")
    [body] = server.requests()
    assert body["messages"][1]["content"] == task and not _summary_requests([body])
