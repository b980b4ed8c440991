"""`/undo` and `/rewind` in the real `ctxagent chat` (subprocess) against the fake model:
the tree comes back exactly (hashes), and the conversation the model sees is rewound."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, model_env
from tests.support.fake_openai import text, tool_calls

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
FIRST = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "hi " + name\n*** Add File: docs/notes.md\n+# notes\n'
         "*** Delete File: tests/test_app.py\n*** End Patch\n")
SECOND = "*** Begin Patch\n*** Delete File: README.md\n*** Update File: docs/notes.md\n@@\n-# notes\n+# more\n*** End Patch\n"


def cli_env(server=None) -> dict[str, str]:
    """The model (when given) and this checkout's ctxagent on the child's path."""
    return {**(model_env(server) if server else {}), "PYTHONPATH": str(ROOT)}


def hashes(repo: Path) -> dict[str, str]:
    return {p.relative_to(repo).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(repo.rglob("*"))
            if p.is_file() and p.relative_to(repo).parts[0] not in (".git", ".ctxagent")}


def user_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_undo_in_chat_restores_the_tree_exactly(ctxagent, fake_server, repo: Path, git: bool) -> None:
    if not git:
        shutil.rmtree(repo / ".git")
    before = hashes(repo)
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("changed three files")])
    proc = ctxagent("chat", "--repo", str(repo), "--yes", input="make it terse\n/undo\n/exit\n",
                    extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "changed three files" in proc.stdout
    assert "restored 3 file(s)" in proc.stdout, proc.stdout
    assert hashes(repo) == before and not (repo / "docs").exists()


def test_rewind_restores_code_and_conversation(ctxagent, fake_server, repo: Path) -> None:
    before = hashes(repo)
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("turn one done"),
                          tool_calls([("apply_patch", json.dumps({"patch": SECOND}))]), text("turn two done"),
                          text("turn three done"), text("fresh answer")])
    script = ("first request\nsecond request\n/rewind\n/rewind 2\nthird request\n"
              "/rewind 1\nfresh request\n/exit\n")
    proc = ctxagent("chat", "--repo", str(repo), "--yes", input=script, extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "turn 1: first request" in proc.stdout and "turn 2: second request" in proc.stdout
    requests = server.requests()
    third = next(r for r in requests if user_messages(r)[-1:] == ["third request"])
    assert user_messages(third) == ["first request", "third request"]  # turn 2 is gone, turn 1 kept
    fresh = requests[-1]
    assert user_messages(fresh) == ["fresh request"] and len(fresh["messages"]) == 2  # system + the new request
    assert hashes(repo) == before  # every change of turns 1 and 2 undone
    assert "Its request was:" in proc.stdout and "second request" in proc.stdout


def test_rewind_refuses_to_clobber_a_hand_edit_in_a_pipe(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("done")])
    first = ctxagent("chat", "--repo", str(repo), "--yes", input="change it\n/exit\n", extra_env=cli_env(server))
    assert first.returncode == 0, first.stderr
    (repo / "src" / "app.py").write_text("my own edit\n")
    edited = hashes(repo)
    proc = ctxagent("undo", "--repo", str(repo), extra_env=cli_env())
    assert proc.returncode == 1 and "edited by hand" in proc.stdout and "--force" in proc.stdout
    assert hashes(repo) == edited
