"""The API key never reaches `.ctxagent/` (notes, todos, memory.db, knowledge base, transcripts,
snapshots), the console, or a later request, even when the model stores it with the state
tools (breaker report F7)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, model_env
from tests.support.fake_openai import text, tool_calls


def _state_calls(secret: str) -> list[tuple[str, str]]:
    """Every state-writing tool, each given the secret in every text field it keeps."""
    return [("note", json.dumps({"action": "create", "title": f"key {secret}", "content": f"the key: {secret}",
                                 "tags": [secret]})),
            ("todo", json.dumps({"action": "add", "content": f"rotate {secret}"})),
            ("memory", json.dumps({"action": "add", "content": f"remember {secret}", "importance": 0.9,
                                   "where": secret})),
            ("rag", json.dumps({"action": "add_text", "text": f"the key is {secret}", "document_id": "keys"})),
            ("plan", json.dumps({"action": "load_to_todo", "plan": {
                "goal": f"use {secret}", "risks": [f"leak {secret}"],
                "steps": [{"title": f"step {i} {secret}", "detail": secret, "validation": secret} for i in range(5)]}}))]


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    return [str(p.relative_to(folder)) for p in sorted(folder.rglob("*")) if p.is_file() and needle in p.read_bytes()]


def test_secrets_never_reach_state_files_the_console_or_later_requests(ctxagent, fake_server, repo: Path) -> None:
    first = fake_server([tool_calls(_state_calls(API_KEY)), text(f"Saved your key {API_KEY} everywhere.",
                                                                 reasoning=f"the key is {API_KEY}", chunk_size=3)])
    proc = ctxagent("run", f"my key is {API_KEY}, save it in a note, a todo and memory", "--repo", str(repo),
                    extra_env=model_env(first))
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in first.requests()[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 5 and not [r for r in results if "error" in r.lower()], results
    state = repo / ".ctxagent"
    assert {"todos.json", "memory.db"} <= {p.name for p in state.iterdir()} and list((state / "notes").glob("*.md"))
    assert _files_holding(state, API_KEY.encode()) == []
    assert _files_holding(state, API_KEY[3:].encode()) == []
    assert "[REDACTED]" in (state / "todos.json").read_text(encoding="utf-8")
    assert API_KEY not in proc.stdout + proc.stderr and "Saved your key [REDACTED] everywhere." in proc.stdout

    second = fake_server([text("nothing to add")])
    proc = ctxagent("run", "what do you remember about the key?", "--repo", str(repo), extra_env=model_env(second))
    assert proc.returncode == 0, proc.stderr
    sent = json.dumps(second.requests(), ensure_ascii=False)
    assert API_KEY not in sent and "rotate [REDACTED]" in sent  # the board came back, without the key
    assert _files_holding(state, API_KEY.encode()) == []
