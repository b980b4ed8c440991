"""The API key never reaches `.ctxagent/` (notes, todos, memory.db, knowledge base, transcripts,
snapshots), the console, or a later request, even when the model stores it with the state
tools (breaker report F7)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

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


SETTINGS_PY = (
    "import os\n\n"
    "AWS_ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE'\n"
    "AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'\n"
    "DATABASE_URL = 'postgres://app:s3cret-pw@db.internal/app'\n"
    "MAX_TOKENS = 4096\n"
)
FILE_SECRETS = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "s3cret-pw")


def test_secrets_in_a_file_the_model_cats_never_reach_the_transcript_or_the_snapshots(
        ctxagent, fake_server, repo: Path) -> None:
    (repo / "settings.py").write_text(SETTINGS_PY, encoding="utf-8")
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "cat settings.py"}))]),
                          text("The settings hold AWS keys and a database URL.")])
    proc = ctxagent("run", "what is in settings.py?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [result] = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    assert FILE_SECRETS[1] in result  # the model reads the file as it is (so its patches match the file)
    state = repo / ".ctxagent"
    transcripts, snapshots = list((state / "sessions").glob("*.jsonl")), list((state / "snapshots").rglob("*.json"))
    assert transcripts and len(snapshots) == 2
    for secret in FILE_SECRETS:
        assert _files_holding(state, secret.encode()) == [], secret
        assert secret not in proc.stdout + proc.stderr
    recorded = "".join(p.read_text(encoding="utf-8") for p in transcripts)
    assert "AWS_SECRET_ACCESS_KEY = '[REDACTED]'" in recorded and "MAX_TOKENS = 4096" in recorded
    assert "postgres://app:[REDACTED]@db.internal/app" in recorded


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_private_key_the_model_cats_is_not_in_the_snapshot_previews(ctxagent, fake_server, repo: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(repo / "id_test")], check=True)
    key_lines = [line for line in (repo / "id_test").read_text().splitlines() if "PRIVATE KEY" not in line]
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "cat id_test"}))]), text("a key")])
    proc = ctxagent("run", "what is id_test?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    state = repo / ".ctxagent"
    snapshots = list((state / "snapshots").rglob("*.json"))
    assert len(snapshots) == 2
    for line in key_lines:  # the report rows fold a preview's line breaks: the block was found before that
        assert _files_holding(state, line[:40].encode()) == [], line
