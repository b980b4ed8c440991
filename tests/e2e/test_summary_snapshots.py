"""Compaction-summary calls made on demand, with the real CLI and the fake server: the
summary call of `/compact` in chat and of a compaction after a context-length error is
a snapshot of its own, written when it ends (`"kind": "summary"`, made for the last main
call), so it is kept when no call follows (the user quits after /compact). `inspect`
shows it and lists it under the call it was made after, and `inspect --grep` finds text
that only the summary call was sent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, flat, model_env, session_snapshots, write_modules
from tests.support.fake_openai import error, text, tool_calls

PROMPT = "You are compacting"  # the first words of the compaction prompt (context/compaction/prompts/compaction.md)
SUMMARY = ("## Goal\n- Rename parse_cfg to parse_config\n## Progress and decisions\n- Read modules m0 to m2\n"
           "## Constraints and preferences\n- (none)\n## Key facts\n- (none)\n"
           "## Current state\n- modules read\n## Next steps\n- rename in every module\n")
SUMMARY_USAGE = {"prompt_tokens": 1234, "completion_tokens": 56}
PARAMS = ("max_tokens", "temperature", "stream", "stream_options")
KEY_SHAPED = "sk-proj-" + "Q" * 24  # read from a module: redacted in every snapshot
EXTRA_SECRET = "team-secret-5a6b7c8d9e0f"
TOO_LONG = error(400, {"error": {"message": "This model's maximum context length is 8000 tokens. However, your "
                                            "messages resulted in 9000 tokens.", "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}})
MODULES = 3


def _setup(repo: Path, env: dict[str, str]) -> None:
    """Modules of about 1,000 tokens each (one holds a key-shaped string), a window of
    8,000 tokens that three of them do not fill (no automatic compaction), the terminal
    tool only, and a secret in the request parameters."""
    write_modules(repo, MODULES, KEY_SHAPED)
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[model]\ncontext_window = 8000\nmax_output_tokens = 500\n'
                      f'extra_body = {{ api_key = "{EXTRA_SECRET}" }}\n'
                      '[agent]\ntools = ["terminal"]\nepisodic_memory = false\n', encoding="utf-8")


def _reads() -> list[dict]:
    return [tool_calls([("terminal", json.dumps({"command": f"cat m{i}.py"}))]) for i in range(MODULES)]


def _rules() -> list[dict]:
    return [{"contains": PROMPT, "step": text(SUMMARY, usage=SUMMARY_USAGE)}]


def _is_summary(body: dict) -> bool:
    return any(PROMPT in str(m.get("content")) for m in body["messages"])






def _assert_as_sent(snap: dict, body: dict, *, quotes_key: bool = True, prefix: bool = True,
                    tools: bool = True) -> None:
    """The summary call's snapshot holds the request the server received, secrets redacted
    (`quotes_key`: the live history had the module with the key; a resumed one has it
    redacted already, as its transcript does). `prefix`: the request is the conversation's
    own, tools included, plus the question (issue 16); else (after a refusal) the compaction
    prompt and a transcript, without tools. `tools`: False before the process's first call,
    when the assembler has no tool schemas yet."""
    request = snap["request"]
    assert request["model"] == body["model"] == "fake-model"
    assert {k: request.get(k) for k in PARAMS} == {k: body.get(k) for k in PARAMS}
    assert body["api_key"] == EXTRA_SECRET and request["extra_body"] == {"api_key": "[REDACTED]"}
    sent = json.dumps(body["messages"])
    assert (KEY_SHAPED in sent) is quotes_key, "the request quotes the module"
    assert json.dumps(request["messages"]) == sent.replace(KEY_SHAPED, "[REDACTED]")
    if prefix and tools:
        assert request["tools"] == body["tools"] and request["tool_choice"] == body["tool_choice"] == "none"
    if prefix:
        assert PROMPT in body["messages"][-1]["content"] and PROMPT not in sent.rpartition(PROMPT)[0]
    else:
        assert "tools" not in request and "tools" not in body
        assert body["messages"][0]["content"].startswith(PROMPT)  # the compaction prompt, as sent
    assert snap["redacted"] is True and "report" not in snap and snap["tokens"] > 0 and "error" not in snap
    assert (snap["usage"]["prompt_tokens"], snap["usage"]["completion_tokens"]) == (1234, 56)


def test_compact_in_chat_then_exit_keeps_the_summary_call(ctxagent, fake_server, repo: Path, env) -> None:
    _setup(repo, env)
    server = fake_server([*_reads(), text("All modules read.")], rules=_rules())
    proc = ctxagent("chat", "--repo", str(repo), "--yes", input="read the modules\n/compact the parser\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    received = server.requests()
    assert [_is_summary(b) for b in received] == [False] * (MODULES + 1) + [True], "/compact asked for a summary"
    session, snaps, raw = session_snapshots(repo)
    last = MODULES + 1  # the turn's last call; no call comes after /compact
    assert sorted(snaps) == [*range(1, last + 1), last + 1]
    summary = snaps[last + 1]
    assert summary["kind"] == "summary"
    assert summary["made_for"] == {"call": last, "turn": 1, "step": last, "trigger": "manual", "focus": "the parser"}
    _assert_as_sent(summary, received[-1])
    assert not [n for n, t in raw.items() if API_KEY in t or EXTRA_SECRET in t or KEY_SHAPED in t]
    assert all("summary_calls" not in snaps[n] for n in range(1, last + 1))

    # inspect shows it: it is the session's last call
    shown = ctxagent("inspect", "last", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert f"session {session} call {last + 1} of 1..{last + 1}" in out
    assert (f"summary call: a compaction summary asked for by /compact after call {last} (turn 1, step {last}); "
            "focus: the parser") in out
    assert 'extra_body={"api_key": "[REDACTED]"}' in out and "secrets in this snapshot were replaced" in out
    sent = len(summary["request"]["messages"])
    assert f"sent {sent} message(s)" in out and "usage 1234 prompt + 56 completion tokens" in out
    assert f"user: {PROMPT}" in out
    assert f"ctxagent inspect {session} --call {last + 1} --json" in out
    assert API_KEY not in shown.stdout + shown.stderr and KEY_SHAPED not in shown.stdout
    assert json.loads(ctxagent("inspect", "last", "--repo", str(repo), "--json").stdout) == summary

    # the call it was made after lists it
    shown = ctxagent("inspect", session, "--call", str(last), "--repo", str(repo))
    out = flat(shown.stdout)
    assert (f"summary call {last + 1}, made by /compact after this call: {sent} message(s), {summary['tokens']} tokens, "
            "usage 1234 prompt + 56 completion tokens") in out
    data = json.loads(ctxagent("inspect", session, "--call", str(last), "--repo", str(repo), "--json").stdout)
    assert [(c["call"], c["kind"]) for c in data["side_calls"]] == [(last + 1, "summary")]

    # "why did the model not see X?": no loop call was sent the compaction prompt; the summary call was
    shown = ctxagent("inspect", session, "--call", str(last), "--repo", str(repo), "--grep", PROMPT)
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert f"{PROMPT} does not appear in the request sent to the model" in out
    assert (f"{PROMPT} appears in the request of summary call {last + 1}, made by /compact after call {last}: "
            f"ctxagent inspect {session} --call {last + 1}") in out
    data = json.loads(ctxagent("inspect", session, "--call", "1", "--repo", str(repo), "--grep", PROMPT,
                               "--json").stdout)
    assert data["grep"] == {"text": PROMPT, "in_request": False, "in_side_calls": [last + 1], "in_summary_calls": []}
    out = flat(ctxagent("inspect", "last", "--repo", str(repo), "--grep", PROMPT).stdout)
    assert f"{PROMPT} appears in the request sent to the model (summary call)" in out

    # a resumed chat numbers on after it
    server = fake_server([text("Changelog noted.")], rules=_rules())
    proc = ctxagent("chat", "--repo", str(repo), "--resume", "last", input="and the changelog\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    _, snaps, _ = session_snapshots(repo)
    assert sorted(snaps)[-1] == last + 2 and snaps[last + 2].get("kind") is None


def test_a_compact_before_the_first_call_of_a_resumed_chat_is_recorded(ctxagent, fake_server, repo: Path,
                                                                       env) -> None:
    _setup(repo, env)
    server = fake_server([*_reads(), text("All modules read.")], rules=_rules())
    assert ctxagent("run", "read the modules", "--repo", str(repo), "--yes",
                    extra_env=model_env(server)).returncode == 0
    proc = ctxagent("chat", "--repo", str(repo), "--resume", "last", input="/compact\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert _is_summary(server.requests()[-1])
    session, snaps, _ = session_snapshots(repo)
    last = MODULES + 1
    assert sorted(snaps) == [*range(1, last + 2)]
    summary = snaps[last + 1]
    assert summary["kind"] == "summary"
    assert summary["made_for"] == {"call": None, "turn": None, "step": None, "trigger": "manual"}
    _assert_as_sent(summary, server.requests()[-1], quotes_key=False, tools=False)
    out = flat(ctxagent("inspect", "last", "--repo", str(repo)).stdout)
    assert "summary call: a compaction summary asked for by /compact before this process's first call" in out


def test_an_overflow_compaction_s_summary_call_is_a_snapshot_of_its_own(ctxagent, fake_server, repo: Path,
                                                                       env) -> None:
    _setup(repo, env)
    server = fake_server([*_reads(), TOO_LONG, text("All modules read.")], rules=_rules())
    proc = ctxagent("run", "read the modules", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    received = server.requests()
    refused = MODULES + 1
    assert [_is_summary(b) for b in received] == [False] * refused + [True, False], "refused, summary, retry"
    session, snaps, raw = session_snapshots(repo)
    assert sorted(snaps) == [*range(1, refused + 3)]
    summary, retry = snaps[refused + 1], snaps[refused + 2]
    assert summary["kind"] == "summary"
    assert summary["made_for"] == {"call": refused, "turn": 1, "step": refused, "trigger": "overflow"}
    _assert_as_sent(summary, received[refused], prefix=False)
    assert retry.get("kind") is None and "summary_calls" not in retry, "the summary call is not stored twice"
    assert retry["request"]["messages"] == json.loads(json.dumps(received[-1]["messages"]).replace(
        KEY_SHAPED, "[REDACTED]"))
    assert not [n for n, t in raw.items() if API_KEY in t or EXTRA_SECRET in t or KEY_SHAPED in t]

    out = flat(ctxagent("inspect", session, "--call", str(refused), "--repo", str(repo)).stdout)
    assert f"summary call {refused + 1}, made after the server refused this call as too long: 2 message(s)" in out
    out = flat(ctxagent("inspect", session, "--call", str(refused + 1), "--repo", str(repo)).stdout)
    assert (f"summary call: a compaction summary asked for after the server refused call {refused} as too long "
            f"(turn 1, step {refused})") in out
    assert "usage 1234 prompt + 56 completion tokens" in out

    shown = ctxagent("inspect", "last", "--repo", str(repo), "--grep", PROMPT)
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert f"call {refused + 2} of 1..{refused + 2}" in out
    assert f"{PROMPT} does not appear in the request sent to the model" in out
    assert (f"{PROMPT} appears in the request of summary call {refused + 1}, made after the server refused call "
            f"{refused} as too long: ctxagent inspect {session} --call {refused + 1}") in out
