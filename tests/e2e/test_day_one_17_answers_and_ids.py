"""Issue 15, item 17: the approval prompt names an unreadable answer and the valid ones
before asking again; ids are taken by unique prefix everywhere (sessions for --resume
and inspect, notes, checkpoints' --session), an ambiguous prefix naming its candidates;
Ctrl-D in chat prints the session id and the command that resumes it. The real CLI in a
subprocess with the fake server (and a pseudo-terminal for Ctrl-D)."""

from __future__ import annotations

import json
import pty
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import APP_PY, ctxagent_exe, model_env
from tests.e2e.test_chat_tty import Terminal
from tests.support.fake_openai import text, tool_calls

PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "hi " + name\n*** End Patch\n')
SESSION_ID = re.compile(r"session (\d{8}-\d{6}-[0-9a-f]{4})")


def _patch_then_done(fake_server):
    return fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("done")])


def test_an_unknown_answer_is_named_with_the_valid_ones(ctxagent, fake_server, repo: Path) -> None:
    server = _patch_then_done(fake_server)
    proc = ctxagent("run", "shorten it", "--repo", str(repo), input="maybe\ny\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "'maybe' is not an answer: type y (yes), n (no; words after it go to the model as your reason) " \
           "or a (all / always)." in proc.stderr
    assert proc.stderr.count("Apply? [y]es") == 2  # asked again after saying why
    assert '"hi " + name' in (repo / "src" / "app.py").read_text(encoding="utf-8")


def test_three_unreadable_answers_refuse_and_say_so(ctxagent, fake_server, repo: Path) -> None:
    server = _patch_then_done(fake_server)
    proc = ctxagent("run", "shorten it", "--repo", str(repo), input="maybe\n\nperhaps\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "an empty line is not an answer" in proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY
    refused = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "no valid answer after 3 tries" in refused


def test_sessions_by_prefix_for_resume_and_inspect(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("first"), text("second")])
    first = ctxagent("run", "hello", "--repo", str(repo), "--json", extra_env=model_env(server))
    session = json.loads(first.stdout.splitlines()[-1])["session_id"]
    resumed = ctxagent("run", "again", "--repo", str(repo), "--resume", session[:-2], "--json",
                       extra_env=model_env(server))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["session_id"] == session
    assert [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "user"] == ["hello", "again"]
    shown = ctxagent("inspect", session[:-2], "--repo", str(repo), "--json")
    assert shown.returncode == 0, shown.stderr and json.loads(shown.stdout)["session_id"] == session


def test_an_ambiguous_session_prefix_lists_the_candidates(ctxagent, repo: Path) -> None:
    folder = repo / ".ctxagent" / "sessions"
    folder.mkdir(parents=True)
    for sid in ("20260101-120000-aaaa", "20260101-120000-aabb"):
        (folder / f"{sid}.jsonl").write_text('{"kind": "meta", "session_id": "%s"}\n' % sid, encoding="utf-8")
    proc = ctxagent("run", "x", "--repo", str(repo), "--resume", "20260101-120000-aa",
                    extra_env={"CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 1
    assert "ambiguous" in proc.stderr and "20260101-120000-aaaa, 20260101-120000-aabb" in proc.stderr
    missing = ctxagent("run", "x", "--repo", str(repo), "--resume", "2025", extra_env={"CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"})
    assert missing.returncode == 1 and "no session '2025'" in missing.stderr


def test_notes_by_prefix_and_an_ambiguous_one(ctxagent, repo: Path) -> None:
    ids = []
    for title in ("first note", "second note"):
        made = ctxagent("notes", "add", "--title", title, "--repo", str(repo), "--json")
        ids.append(json.loads(made.stdout))
    one = ids[0]
    prefix = next(one[:n] for n in range(len(one)) if not ids[1].startswith(one[:n]))
    shown = ctxagent("notes", "show", prefix, "--repo", str(repo), "--json")
    assert shown.returncode == 0, shown.stderr and "first note" in shown.stdout
    ambiguous = ctxagent("notes", "show", "note_", "--repo", str(repo))
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr
    assert ids[0] in ambiguous.stderr and ids[1] in ambiguous.stderr
    removed = ctxagent("notes", "rm", prefix, "--repo", str(repo))
    assert removed.returncode == 0, removed.stderr
    assert json.loads(ctxagent("notes", "list", "--repo", str(repo), "--json").stdout)[0]["title"] == "second note"


def test_checkpoints_and_undo_take_a_session_prefix(ctxagent, fake_server, repo: Path) -> None:
    server = _patch_then_done(fake_server)
    proc = ctxagent("run", "shorten it", "--repo", str(repo), "--yes", "--json", extra_env=model_env(server))
    session = json.loads(proc.stdout.splitlines()[-1])["session_id"]
    listed = ctxagent("checkpoints", "--session", session[:11], "--repo", str(repo), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [c["session_id"] for c in json.loads(listed.stdout)] == [session]
    undone = ctxagent("undo", "--session", session[:11], "--repo", str(repo))
    assert undone.returncode == 0, undone.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY


def test_the_end_of_a_scripted_chat_says_how_to_resume(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("hi back")])
    proc = ctxagent("chat", "--repo", str(repo), input="hello\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [session] = set(SESSION_ID.findall(proc.stdout.split("hi back", 1)[1]))
    assert f"resume it with: ctxagent chat --resume {session} --repo {repo.resolve()}" in " ".join(proc.stdout.split())
    assert (repo / ".ctxagent" / "sessions" / f"{session}.jsonl").is_file()


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_ctrl_d_on_a_terminal_prints_the_session_and_the_resume_command(fake_server, env, repo: Path) -> None:
    server = fake_server([text("hi back")])
    term = Terminal([*ctxagent_exe(), "chat", "--repo", str(repo)], {**env, **model_env(server), "TERM": "xterm"})
    term.expect("›")
    term.send(b"hello\r")
    term.expect("hi back")
    term.expect("›")
    term.send(b"\x04")
    rest = " ".join(term.rest().split())
    assert term.wait() == 0
    [session] = [p.stem for p in (repo / ".ctxagent" / "sessions").glob("*.jsonl")]
    assert f"session {session} (1 turn(s)) is saved; resume it with: ctxagent chat --resume {session}" in rest
