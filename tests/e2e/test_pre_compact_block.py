"""A PreCompact hook can stop a compaction (exit 2, or `{"decision": "block"}`), as in Claude
Code since 2.1.105: `/compact` then leaves the history as it is, and an automatic compaction
writes no summary (masking alone frees room); the user is told why each time."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import text, tool_calls

PROMPT = "You are compacting"  # the first words of the compaction prompt
SUMMARY = "## Goal\n- answer (SUMMARY-77aa)\n## Next steps\n- wait\n"


def _setup(env: dict[str, str], hooks: dict, body: str = "") -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text('[agent]\ntools = ["terminal"]\nepisodic_memory = false\n' + body,
                                        encoding="utf-8")
    (folder / "hooks.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")


def _hook(command: str, matcher: str) -> list[dict]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def _compactions(repo: Path) -> list[dict]:
    [path] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r["event"] for r in records if r["kind"] == "event" and r["event"]["type"] == "compaction"]


def test_a_blocked_manual_compact_leaves_the_history_and_says_why(ctxagent, fake_server, repo: Path, env) -> None:
    _setup(env, {"PreCompact": _hook("echo 'a review is in progress' >&2; exit 2", "manual")})
    answers = [text(f"Answer {i}: greet returns hello plus the name.") for i in range(5)]
    server = fake_server([*answers, text("Still all here.")], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    questions = "".join(f"question {i} about greet?\n" for i in range(5))
    proc = ctxagent("chat", "--repo", str(repo), input=f"{questions}/compact\nand now?\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    out = flat(proc.stdout)
    assert "a PreCompact hook blocked the compaction: a review is in progress" in out, out
    assert "compacted on request" not in out
    bodies = server.requests()
    assert not [b for b in bodies if PROMPT in json.dumps(b["messages"])], "no summary request"
    users = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "user"]
    assert users[:5] == [f"question {i} about greet?" for i in range(5)], "the history is unchanged"
    assert not _compactions(repo)


def test_a_json_block_decision_stops_it_too(ctxagent, fake_server, repo: Path, env) -> None:
    _setup(env, {"PreCompact": _hook("""echo '{"decision": "block", "reason": "not before the release"}'""",
                                     "manual")})
    server = fake_server([text(f"Answer {i}.") for i in range(4)], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    proc = ctxagent("chat", "--repo", str(repo), input="one\ntwo\nthree\n/compact\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "a PreCompact hook blocked the compaction: not before the release" in flat(proc.stdout)
    assert not [b for b in server.requests() if PROMPT in json.dumps(b["messages"])]


def test_a_blocked_automatic_compaction_writes_no_summary_and_the_turn_goes_on(ctxagent, fake_server, repo: Path,
                                                                              env) -> None:
    _setup(env, {"PreCompact": _hook("cat > ../precompact.json; echo 'keep every line' >&2; exit 2", "auto")},
           "[model]\ncontext_window = 6000\nmax_output_tokens = 500\n")
    (repo / "big.txt").write_text("".join(f"line {i}: the configuration value is {i * 7}\n" for i in range(400)),
                                  encoding="utf-8")
    reads = [tool_calls([("terminal", json.dumps({"command": f"sed -n '{a},{a + 99}p' big.txt"}))])
             for a in range(1, 400, 100)]
    server = fake_server([*reads, *reads, text("Read it all.")], rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    proc = ctxagent("run", "Read big.txt in parts.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("a PreCompact hook blocked the compaction: keep every line" in n for n in notices), notices
    assert json.loads((repo.parent / "precompact.json").read_text(encoding="utf-8"))["trigger"] == "auto"
    assert not [b for b in server.requests() if PROMPT in json.dumps(b["messages"])], "no summary was asked for"
    assert all(c["method"] == "masking" for c in _compactions(repo))
    assert "Read it all." in proc.stdout
