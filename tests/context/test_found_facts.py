"""One turn of the real loop against the fake server with 3+ compactions, whose facts the agent
found itself (issue 16): every one of them is in the last request (a smaller run of
`benchmarks/compaction_facts.py`'s agent session)."""

from __future__ import annotations

import json

from tests.support.found_facts import run_session


def test_facts_the_agent_found_survive_three_compactions_in_one_turn(tmp_path) -> None:
    result = run_session(tmp_path, files=12, calls=24, window=6000)
    assert result["reason"] == "finished"
    assert len(result["compactions"]) >= 3 and {c["trigger"] for c in result["compactions"]} == {"auto"}
    first, last = (json.dumps(r["messages"]) for r in (result["requests"][0], result["requests"][-1]))
    assert not any(fact in first for fact in result["facts"]), "the facts come from the session, not the task"
    assert "return value * 39 + 0" not in last, "the first module's text was compacted away"
    assert result["missing"] == []
    assert len(result["facts"]) == 20
