"""`/context` in chat when the next call would compact, with the real CLI and the fake
server: the preview makes no model call (no summary request reaches the server, no
snapshot is written), shows the extractive summary in place of the model's and says so,
and the next real call compacts as before, with one summary call kept in its snapshot."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import flat, model_env, session_snapshots
from tests.e2e.test_summary_snapshots import MODULES, PROMPT, SUMMARY, SUMMARY_USAGE, _is_summary, _reads
from tests.support.fake_openai import text

#: The turn's last reply: long enough that the history passes the compaction threshold
#: (80% of the 8,000-token window) only after it, so turn 1 never compacts.
LONG_REPLY = "All modules read. " + " ".join(f"parse_cfg_{i} is defined in module {i % MODULES}." for i in range(330))


def _setup(repo: Path, env: dict[str, str]) -> None:
    for i in range(MODULES):
        lines = [f"def parse_cfg_{i}_{j}(path):  # module {i}\n" for j in range(100)]
        (repo / f"m{i}.py").write_text("".join(lines), encoding="utf-8")
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[model]\ncontext_window = 8000\nmax_output_tokens = 500\n'
                      '[agent]\ntools = ["terminal"]\nepisodic_memory = false\n', encoding="utf-8")


def test_context_over_the_threshold_makes_no_model_call_and_says_the_summary_is_a_stand_in(
        ctxagent, fake_server, repo: Path, env) -> None:
    _setup(repo, env)
    rules = [{"contains": PROMPT, "step": text(SUMMARY, usage=SUMMARY_USAGE)}]
    server = fake_server([*_reads(), text(LONG_REPLY), text("Changelog noted.")], rules=rules)
    proc = ctxagent("chat", "--repo", str(repo), "--yes",
                    input="read the modules\n/context\n/context parse_cfg\nand the changelog\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    received = server.requests()
    assert [_is_summary(b) for b in received] == [False] * (MODULES + 1) + [True, False], (
        "turn 1 never compacts, /context sends nothing, turn 2's call compacts with one summary call")
    out = flat(proc.stdout)
    assert out.count("the summary shown is a stand-in") == 2, out
    assert "this preview made no model call" in out and "stand-in (extractive" in out

    _, snaps, _ = session_snapshots(repo)
    first = MODULES + 1
    assert sorted(snaps) == [*range(1, first + 2)], "/context wrote no snapshot"
    assert all("summary_calls" not in snaps[n] for n in range(1, first + 1))
    call = snaps[first + 1]
    assert call.get("kind") is None and call["report"]["compaction"]["method"] == "llm"
    assert "stand_in" not in call["report"]["compaction"]
    [summary] = call["summary_calls"]
    assert summary["trigger"] == "auto" and summary["request"]["messages"] == received[first]["messages"]
    assert (summary["usage"]["prompt_tokens"], summary["usage"]["completion_tokens"]) == (1234, 56)
    assert call["request"]["messages"] == received[-1]["messages"]
    assert any("Rename parse_cfg to parse_config" in str(m.get("content")) for m in received[-1]["messages"])
