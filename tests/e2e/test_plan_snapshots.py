"""The plan tool's own model calls, with the real CLI and the fake server: each is a
snapshot of its own, numbered among the session's calls, naming the main call, turn and
tool call it was made for, with its exact request (redacted) and its usage; `inspect`
shows it, and `inspect --grep` finds text that only a plan call was sent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, flat, model_env, session_snapshots
from tests.support.fake_openai import error, text, tool_calls

PARAMS = ("max_tokens", "temperature", "stream", "stream_options")
PLAN = {"goal": "Split the parser", "risks": [{"risk": "imports break", "mitigation": "run the tests"}],
        "steps": [{"title": f"Step {i}", "detail": f"do {i}", "validation": f"check {i}"} for i in range(1, 6)]}
EXTRA_SECRET = "team-secret-0f9e8d7c6b5a"
ONLY_THE_PLAN_CALL = "planning a software task before anyone starts"  # from tools/prompts/plan.md






def test_each_plan_call_is_a_snapshot_of_its_own_and_inspect_shows_it(ctxagent, fake_server, repo: Path,
                                                                      env: dict[str, str]) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[model]\nextra_body = {{ api_key = "{EXTRA_SECRET}", user = "plan-e2e" }}\n', encoding="utf-8")
    args = {"goal": "Split the parser", "constraints": [f"never print the key {API_KEY}"]}
    server = fake_server([
        tool_calls([{"name": "plan", "arguments": json.dumps(args), "id": "call_plan"}],
                   usage={"prompt_tokens": 900, "completion_tokens": 30}),
        text("Here is a plan: first think.", usage={"prompt_tokens": 120, "completion_tokens": 7}),  # invalid: retried
        text(json.dumps(PLAN), usage={"prompt_tokens": 400, "completion_tokens": 250}),
        text("Planned."),
    ])
    proc = ctxagent("run", "plan the parser split", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    received = server.requests()
    assert len(received) == 4
    session, snaps, raw = session_snapshots(repo)
    assert sorted(snaps) == [1, 2, 3, 4], "the two plan calls take the numbers between the loop's calls"
    assert [snaps[n].get("kind") for n in (1, 2, 3, 4)] == [None, "plan", "plan", None]
    assert snaps[4]["report"]["call"] == 4

    for n, attempt, usage in ((2, 1, (120, 7)), (3, 2, (400, 250))):
        snap, body = snaps[n], received[n - 1]
        assert snap["made_for"] == {"call": 1, "turn": 1, "step": 1, "tool": "plan", "tool_call_id": "call_plan",
                                    "attempt": attempt}
        assert (snap["usage"]["prompt_tokens"], snap["usage"]["completion_tokens"]) == usage
        assert "error" not in snap and "report" not in snap and snap["tokens"] > 0
        request = snap["request"]
        assert request["model"] == body["model"] == "fake-model"
        assert {k: request.get(k) for k in PARAMS} == {k: body.get(k) for k in PARAMS}
        assert "tools" not in request and "tools" not in body
        assert request["messages"] == body["messages"]  # the key in the goal was redacted before the tool ran
        assert "never print the key [REDACTED]" in body["messages"][0]["content"]
        # the parameters as sent, the secret in them redacted
        assert body["api_key"] == EXTRA_SECRET and body["user"] == "plan-e2e"
        assert request["extra_body"] == {"api_key": "[REDACTED]", "user": "plan-e2e"} and snap["redacted"] is True
    assert len(snaps[3]["request"]["messages"]) == 3, "the retry quotes the bad reply and the validation error"
    assert not [n for n, t in raw.items() if API_KEY in t or EXTRA_SECRET in t]

    # the main call lists the plan calls made for its reply's tool call
    shown = ctxagent("inspect", session, "--call", "1", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert "plan call 2, made for this call's tool call call_plan (attempt 1): 1 message(s)" in out
    assert "usage 120 prompt + 7 completion tokens" in out
    assert "plan call 3, made for this call's tool call call_plan (attempt 2): 3 message(s)" in out
    assert flat(ctxagent("inspect", session, "--call", "4", "--repo", str(repo)).stdout).count("plan call") == 0

    # the plan call itself: who made it, for which call, parameters, usage, its messages
    shown = ctxagent("inspect", session, "--call", "3", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert f"session {session} call 3 of 1..4" in out
    assert "plan call: made by the plan tool while running tool call call_plan of call 1 (turn 1, step 1), attempt 2" in out
    assert "request model fake-model, stream=true max_tokens=" in out and '"include_usage": true' in out
    assert 'extra_body={"api_key": "[REDACTED]", "user": "plan-e2e"}' in out
    assert "secrets in this snapshot were replaced by [REDACTED]" in out
    assert "sent 3 message(s)" in out and "usage 400 prompt + 250 completion tokens" in out
    assert f"user: You are {ONLY_THE_PLAN_CALL}" in out and "assistant: Here is a plan: first think." in out
    assert f"ctxagent inspect {session} --call 3 --json" in out
    assert API_KEY not in shown.stdout + shown.stderr and EXTRA_SECRET not in shown.stdout
    data = json.loads(ctxagent("inspect", session, "--call", "3", "--repo", str(repo), "--json").stdout)
    assert data == snaps[3]
    main = json.loads(ctxagent("inspect", session, "--call", "1", "--repo", str(repo), "--json").stdout)
    assert [(c["call"], c["made_for"]["attempt"]) for c in main["side_calls"]] == [(2, 1), (3, 2)]

    # "why did the model not see X?": the last call was not sent it, the plan calls were
    shown = ctxagent("inspect", "last", "--repo", str(repo), "--grep", ONLY_THE_PLAN_CALL)
    assert shown.returncode == 0, shown.stderr
    out = flat(shown.stdout)
    assert "call 4 of 1..4" in out and f"{ONLY_THE_PLAN_CALL} does not appear in the request sent to the model" in out
    for n, attempt in ((2, 1), (3, 2)):
        assert (f"{ONLY_THE_PLAN_CALL} appears in the request of plan call {n}, made for call 1's tool call "
                f"call_plan (attempt {attempt}): ctxagent inspect {session} --call {n}") in out
    shown = ctxagent("inspect", session, "--call", "2", "--repo", str(repo), "--grep", ONLY_THE_PLAN_CALL)
    out = flat(shown.stdout)
    assert f"{ONLY_THE_PLAN_CALL} appears in the request sent to the model (plan call)" in out
    assert "appears in the request of plan call 3" in out
    data = json.loads(ctxagent("inspect", "last", "--repo", str(repo), "--grep", ONLY_THE_PLAN_CALL, "--json").stdout)
    assert data["grep"] == {"text": ONLY_THE_PLAN_CALL, "in_request": False, "in_side_calls": [2, 3], "in_summary_calls": []}
    assert "side_calls" not in data


def test_a_plan_call_that_ends_the_turn_or_fails_is_still_recorded(ctxagent, fake_server, repo: Path) -> None:
    """With --max-steps 1 no main call follows the plan call: it is the session's last call.
    A plan call the server refuses is recorded with its error, and the next call numbers on."""
    plan = json.dumps({"goal": "Split the parser"})
    server = fake_server([tool_calls([{"name": "plan", "arguments": plan, "id": "c1"}]), text(json.dumps(PLAN)),
                          tool_calls([{"name": "plan", "arguments": plan, "id": "c2"}]),
                          error(400, {"error": {"message": "no plans today", "type": "invalid_request_error"}}),
                          text("I could not plan it.")])
    env = model_env(server)
    proc = ctxagent("run", "plan it", "--repo", str(repo), "--max-steps", "1", extra_env=env)
    assert proc.returncode == 3 and "max_steps" in proc.stderr, proc.stderr
    session, snaps, _ = session_snapshots(repo)
    assert sorted(snaps) == [1, 2] and snaps[2]["kind"] == "plan" and snaps[2]["made_for"]["call"] == 1
    shown = ctxagent("inspect", "last", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    assert "call 2 of 1..2" in flat(shown.stdout) and "plan call: made by the plan tool" in flat(shown.stdout)

    proc = ctxagent("run", "plan it again", "--repo", str(repo), "--resume", "last", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    _, snaps, _ = session_snapshots(repo)
    assert sorted(snaps) == [1, 2, 3, 4, 5] and [snaps[n].get("kind") for n in (3, 4, 5)] == [None, "plan", None]
    failed = snaps[4]
    assert failed["made_for"] == {"call": 3, "turn": 2, "step": 1, "tool": "plan", "tool_call_id": "c2", "attempt": 1}
    assert failed["usage"] is None and failed["error"].startswith("BadRequestError") and "no plans today" in failed["error"]
    out = flat(ctxagent("inspect", session, "--call", "3", "--repo", str(repo)).stdout)
    assert "plan call 4, made for this call's tool call c2 (attempt 1): 1 message(s)" in out
    assert "failed: BadRequestError" in out
    out = flat(ctxagent("inspect", session, "--call", "4", "--repo", str(repo)).stdout)
    assert "sent 1 message(s)" in out and "failed: BadRequestError" in out and "no plans today" in out
