"""Resume goes on from an automatic compaction, with the real CLI and the fake server.

A session long enough for the 80% threshold of a small window is compacted automatically
(a model summary). Resumed with `run`/`chat --resume`, the first request carries the same
summary and no second summary request is made. An old transcript (no `view` record), or
one whose covered messages were edited, still resumes: the history is compacted anew, and
the session says why.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import model_env, write_modules
from tests.support.fake_openai import text, tool_calls

PROMPT = "You are compacting"  # the first words of the compaction prompt (context/compaction/prompts/compaction.md)
SUMMARY = ("## Goal\n- Rename parse_cfg to parse_config; release tag v9-TEST\n"
           "## Progress and decisions\n- Read modules m0 to m3, each defines parse_cfg variants (SUMMARY-7f3a)\n"
           "## Constraints and preferences\n- (none)\n## Key facts\n- release tag v9-TEST\n"
           "## Current state\n- modules read, nothing changed yet\n## Next steps\n- rename in every module\n")
TASK = "Task: rename function parse_cfg to parse_config across the repo. Note: the release tag is v9-TEST."
LATEST = "Also update the changelog."
ROUNDS = 6  # the threshold is passed at the call after the 6th result (window 8,000, see _setup)
KEY_SHAPED = "sk-proj-" + "Q" * 24  # redacted in the transcript, not in memory: the view's digest must agree


def _setup(repo: Path, env: dict[str, str]) -> None:
    """Modules of about 1,000 tokens each, and a user config with a small window, the terminal
    tool only and a compaction target that masking alone cannot reach (so a summary is made)."""
    write_modules(repo, ROUNDS + 2, KEY_SHAPED)
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[model]\ncontext_window = 8000\nmax_output_tokens = 500\n'
                      '[agent]\ntools = ["terminal"]\nepisodic_memory = false\n'
                      '[context]\ncompaction_target_ratio = 0.4\n', encoding="utf-8")


def _script() -> list[dict]:
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat m{i}.py"}))]) for i in range(ROUNDS)]
    return [*reads, text("All modules read."), text("Changelog noted."), text("Third answer.")]


def _summary_requests(bodies: list[dict]) -> list[dict]:
    return [b for b in bodies if any(PROMPT in str(m.get("content")) for m in b["messages"])]


def _summary_in(body: dict) -> str:
    [content] = [m["content"] for m in body["messages"] if "[Context summary" in str(m.get("content"))]
    return content


def _transcript(repo: Path) -> tuple[Path, list[dict]]:
    [path] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _events(records: list[dict], kind: str) -> list[dict]:
    return [r["event"] for r in records if r["kind"] == "event" and r["event"]["type"] == kind]


def _first_run(ctxagent, fake_server, repo: Path, env: dict[str, str]):
    _setup(repo, env)
    server = fake_server(_script(), rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    menv = model_env(server)
    proc = ctxagent("run", TASK, "--repo", str(repo), "--yes", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    before = server.requests()
    assert len(_summary_requests(before)) == 1, "the first run compacted once, with a model summary"
    path, records = _transcript(repo)
    [compaction] = _events(records, "compaction")
    assert compaction["details"]["trigger"] == "auto" and compaction["details"]["method"] == "llm"
    assert [r["kind"] for r in records].count("view") == 1
    assert KEY_SHAPED not in path.read_text(encoding="utf-8")
    last = [b for b in before if b not in _summary_requests(before)][-1]
    return server, menv, before, _summary_in(last)


def _assert_request_keeps_the_task(body: dict) -> None:
    convo = [m for m in body["messages"] if m["role"] != "system"]
    assert convo[0] == {"role": "user", "content": TASK}, "the task's first user message, verbatim (C03)"
    assert convo[-1]["role"] == "user" and convo[-1]["content"].endswith(LATEST), "the latest request is last"
    ids = {c["id"] for m in convo if m["role"] == "assistant" for c in m.get("tool_calls") or []}
    assert all(m["tool_call_id"] in ids for m in convo if m["role"] == "tool"), "every result answers a call"


def test_resume_goes_on_from_the_automatic_compaction_without_a_summary_call(ctxagent, fake_server, repo: Path,
                                                                             env) -> None:
    server, menv, before, summary = _first_run(ctxagent, fake_server, repo, env)
    assert "SUMMARY-7f3a" in summary

    proc = ctxagent("run", LATEST, "--repo", str(repo), "--resume", "last", "--json", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    after = server.requests()[len(before):]
    assert len(after) == 1 and not _summary_requests(after), "no second summary request"
    assert _summary_in(after[0]) == summary, "the model sees the summary it saw before"
    _assert_request_keeps_the_task(after[0])
    printed = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert "compaction" not in printed and "notice" not in printed

    # chat --resume goes on from it too, and /context shows the same view before the request
    proc = ctxagent("chat", "--repo", str(repo), "--resume", "last", input="/context\nthird\n/exit\n", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    later = server.requests()[len(before) + 1:]
    assert len(later) == 1 and not _summary_requests(later) and _summary_in(later[0]) == summary
    _, records = _transcript(repo)
    assert len(_events(records, "compaction")) == 1 and not _events(records, "notice")


def test_an_old_transcript_without_the_view_record_still_resumes(ctxagent, fake_server, repo: Path, env) -> None:
    server, menv, before, summary = _first_run(ctxagent, fake_server, repo, env)
    path, records = _transcript(repo)
    old = [r for r in records if r["kind"] != "view"]  # as ctxagent wrote transcripts before view records
    path.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")

    proc = ctxagent("run", LATEST, "--repo", str(repo), "--resume", "last", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    assert "note: resumed session: its last automatic compaction cannot be reused" in proc.stdout + proc.stderr
    after = server.requests()[len(before):]
    assert len(_summary_requests(after)) == 1, "compacted anew, once"
    main = [b for b in after if b not in _summary_requests(after)]
    assert len(main) == 1 and "SUMMARY-7f3a" in _summary_in(main[0])
    _assert_request_keeps_the_task(main[0])
    _, records = _transcript(repo)
    [notice] = _events(records, "notice")
    assert "no view record for the automatic compaction of turn 1" in notice["message"]
    assert [r["kind"] for r in records].count("view") == 1, "the new compaction is recorded for the next resume"

    # and the next resume goes on from that one
    proc = ctxagent("run", "third", "--repo", str(repo), "--resume", "last", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    last = server.requests()[len(before) + len(after):]
    assert len(last) == 1 and not _summary_requests(last) and _summary_in(last[0]) == _summary_in(main[0])


def test_an_edited_transcript_is_compacted_anew_with_a_note(ctxagent, fake_server, repo: Path, env) -> None:
    server, menv, before, summary = _first_run(ctxagent, fake_server, repo, env)
    path, records = _transcript(repo)
    tool = next(r for r in records if r["kind"] == "message" and r["message"]["role"] == "tool")
    tool["message"]["content"] = tool["message"]["content"].replace("module 0", "module X")  # covered by the view
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    proc = ctxagent("run", LATEST, "--repo", str(repo), "--resume", "last", "--json", extra_env=menv)
    assert proc.returncode == 0, proc.stderr
    [notice] = [e for e in map(json.loads, proc.stdout.splitlines()) if e["type"] == "notice"]
    assert "the history no longer starts with the" in notice["message"]
    after = server.requests()[len(before):]
    assert len(_summary_requests(after)) == 1
    _assert_request_keeps_the_task([b for b in after if b not in _summary_requests(after)][0])
