"""What a new session carries over (`ctxagent.agent.carryover`): counted, said, cut by age."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta

from ctxagent.agent.carryover import carry_over, cutoff_of, notice_text, state_loader
from ctxagent.todo.board import TodoBoard
from ctxagent.tools.notes import NoteTool


def _board(repo, session: str = "20261201-100000-abcd") -> TodoBoard:
    return TodoBoard(repo / ".ctxagent" / "todos.json", session_id=session)


def _age_item(repo, index: int, days: float) -> None:
    path = repo / ".ctxagent" / "todos.json"
    board = json.loads(path.read_text(encoding="utf-8"))
    stamp = (datetime.now().astimezone() - timedelta(days=days)).isoformat(timespec="seconds")
    board["items"][index]["updated_at"] = board["items"][index]["created_at"] = stamp
    path.write_text(json.dumps(board), encoding="utf-8")


def test_items_record_the_session_that_changed_them(tmp_path) -> None:
    item = _board(tmp_path).add("port the parser")
    assert item.session == "20261201-100000-abcd"
    updated = _board(tmp_path, "20261202-090000-ef01").update(item.id, status="in_progress")
    assert updated.session == "20261202-090000-ef01"
    assert TodoBoard(tmp_path / ".ctxagent" / "todos.json").update(item.id, status="pending").session == updated.session


def test_open_items_and_notes_from_before_the_session_are_counted_and_old_ones_left_out(tmp_path) -> None:
    board = _board(tmp_path)
    board.add("recent open item")
    board.add("old open item")
    board.add("done item", status="completed")
    _age_item(tmp_path, 1, 30)
    NoteTool.for_repo(tmp_path).run({"action": "create", "title": "state", "content": "half done",
                                     "note_type": "task_state"})
    started = time.time() + 5
    found = carry_over(tmp_path, started, max_age_days=7)
    assert [i["content"] for i in found.items] == ["recent open item"] and found.left_out_items == 1
    assert len(found.notes) == 1 and found.left_out_notes == 0
    said = notice_text(found, max_age_days=7, fresh=False, now=started)
    assert said.startswith("carried over into this session: 1 open todo item(s) from session 20261201-100000-abcd")
    assert "1 note(s)" in said and "1 older item(s)/note(s) left out (older than [state] carry_over_max_age_days = 7)" in said
    assert "/todo clear" in said and "--fresh" in said
    fresh = carry_over(tmp_path, started, max_age_days=7, fresh=True)
    assert fresh.items == [] and fresh.left_out_items == 2 and fresh.left_out_notes == 1
    assert notice_text(carry_over(tmp_path, time.time() - 60 * 86_400, max_age_days=7), max_age_days=7, fresh=False) is None


def test_the_loader_leaves_out_what_is_older_than_the_cutoff(tmp_path) -> None:
    board = _board(tmp_path)
    board.add("recent")
    board.add("old")
    _age_item(tmp_path, 1, 30)
    started = time.time()
    state, _ = state_loader(cutoff_of(started, 7, False))(tmp_path, "")
    assert [i["content"] for i in state["todos"]] == ["recent"]
    state, _ = state_loader(cutoff_of(started + 5, 7, True))(tmp_path, "")
    assert "todos" not in state, "--fresh: nothing from before the session"
    assert cutoff_of(started, 0, False) == started, "0 days: nothing carried over"
