"""`inspect --grep TEXT` on a call says how many earlier messages of the session mention TEXT
but were no longer in that call's history (compacted away by /compact). "Earlier" means
before that call: a message the session wrote after it (the call's own reply, later tool
results) was never in its history and must not be reported as compacted away."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import text, tool_calls

GONE = "earlier message(s) of the session mention it but were no longer in its history"
SUMMARY = ("## Goal\nLook at the app.\n## Progress and decisions\nRead two modules.\n## Constraints and preferences\n"
           "None.\n## Key facts\nThe app greets.\n## Current state\nRead.\n## Next steps\nWait for the user.")




def cat(path: str, call_id: str) -> dict:
    return tool_calls([{"name": "terminal", "arguments": json.dumps({"command": f"cat {path}"}), "id": call_id}])


def test_grep_counts_only_messages_before_the_call_as_compacted_away(ctxagent, fake_server, repo: Path,
                                                                     env: dict[str, str]) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[model]\ncontext_window = 16000\nmax_output_tokens = 1000\n", encoding="utf-8")
    for name, marker in (("one.py", "marker-in-result"), ("two.py", "other")):
        lines = [f"def f{i}(x):  # {marker if i == 0 else 'line'} {i}\n    return x + {i}\n" for i in range(150)]
        (repo / "src" / name).write_text("".join(lines), encoding="utf-8")
    server = fake_server([cat("src/one.py", "call_one"), text("The app prints marker-after-call-one."),
                          cat("src/two.py", "call_two"), text("second answer"), text("third answer")],
                         rules=[{"contains": "You are compacting", "step": text(SUMMARY)}])
    proc = ctxagent("chat", "--repo", str(repo), input="look at the app\nmore\n/compact\nand now?\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr

    # call 1 was sent the task alone: the tool call, its result and the answer came after it
    for needle in ("marker-in-result", "marker-after-call-one"):
        first = ctxagent("inspect", "last", "--call", "1", "--repo", str(repo), "--grep", needle)
        assert first.returncode == 0, first.stderr
        assert f"{needle} does not appear in the request sent to the model" in flat(first.stdout)
        assert GONE not in flat(first.stdout), needle

    # the last call came after /compact: turn 1's tool result and answer were compacted away
    for needle in ("marker-in-result", "marker-after-call-one"):
        last = ctxagent("inspect", "last", "--repo", str(repo), "--grep", needle)
        assert last.returncode == 0, last.stderr
        assert f"1 {GONE}" in flat(last.stdout), (needle, last.stdout)
