"""Key-fact extraction and the summary format (sections, validation, merging)."""

from __future__ import annotations

import pytest

from ctxagent.context.compaction.extractive import extractive_summary, fact_span, user_facts
from ctxagent.context.compaction.facts import extract_facts
from ctxagent.context.compaction.sections import (
    SECTIONS,
    insert_items,
    parse_summary,
    render_summary,
    summary_message,
    summary_problem,
)
from tests.context.long_history import USELESS, call


def texts(text: str, source: str = "user") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for fact in extract_facts(text, source=source):
        out.setdefault(fact.kind, []).append(fact.text)
    return out


def test_user_stated_facts_are_extracted_verbatim():
    found = texts("Rename parse_cfg in src/app/config.py (ticket JIRA-1234, tag v9-TEST, release 1.4.2). "
                  "Use port 8443, timeout=30s, see https://example.com/docs/a and run `pytest -x tests/`.")
    assert found["path"] == ["src/app/config.py"]
    assert {"JIRA-1234", "parse_cfg"} <= set(found["id"])
    assert found["version"] == ["v9-TEST", "1.4.2"]
    assert {"port 8443", "timeout=30s"} <= set(found["number"])
    assert found["url"] == ["https://example.com/docs/a"]
    assert found["command"] == ["pytest -x tests/"]


@pytest.mark.parametrize("text, kind, fact", [
    ("edit ./scripts/run.sh now", "path", "./scripts/run.sh"),
    ("the file README.md", "path", "README.md"),
    ("class ContextBuilder is big", "id", "ContextBuilder"),
    ("commit 3fa9c2e1b broke it", "id", "3fa9c2e1b"),
    ("call os.path.join() here", "id", "os.path.join()"),
    ("$ make test\n", "command", "make test"),
    ("limit of 250000 tokens", "number", "250000 tokens"),
    ("修改 config.py 里的 max_retries", "id", "max_retries"),
    ("修改 config.py 里的 max_retries", "path", "config.py"),
])
def test_fact_kinds(text, kind, fact):
    assert fact in texts(text).get(kind, [])


def test_small_bare_numbers_and_words_are_not_facts():
    found = texts("There are 3 files and the answer is yes.")
    assert found == {}


def test_source_code_that_names_an_error_is_not_an_error_line():
    """Tester finding 9: a `cat` of Python code gave '[error] from types import TracebackType'
    and '[error] except TypeError:' as key facts of the summary."""
    code = ("from types import TracebackType\n    except TypeError:\n        raise ValueError('bad')\n"
            "class ConfigError(Exception):\nretry_on = KeyError\n# a ValueError here means a typo\n")
    assert extract_facts(code, source="tool") == []
    output = code + "Traceback (most recent call last):\nKeyError: 'name'\nerror: linker failed\n"
    assert [f.text for f in extract_facts(output, source="tool")] == [
        "Traceback (most recent call last):", "KeyError: 'name'", "error: linker failed"]


def test_tool_output_yields_only_error_lines():
    output = "src/a.py\nsrc/b.py\nTraceback (most recent call last):\nValueError: bad config\nFAILED tests/t.py::x\n"
    found = texts(output, source="tool")
    assert list(found) == ["error"]
    assert found["error"] == ["Traceback (most recent call last):", "ValueError: bad config", "FAILED tests/t.py::x"]


def test_facts_are_deduplicated():
    facts = extract_facts("a.py and a.py and a.py, v2.0.1 v2.0.1")
    assert [f.text for f in facts] == ["v2.0.1", "a.py"]


# -- summary format ---------------------------------------------------------------

def test_render_and_parse_round_trip():
    sections = {key: [f"{key} item 1", f"{key} item 2"] for key, _ in SECTIONS}
    assert parse_summary(render_summary(sections)) == sections
    assert parse_summary(summary_message(render_summary(sections))["content"]) == sections


@pytest.mark.parametrize("text", [None, "", USELESS, "## Goal\n- only one section",
                                  render_summary({})])  # headings with "(none)" only
def test_summary_problem_rejects_useless_replies(text):
    assert summary_problem(text) is not None


def test_summary_problem_accepts_other_heading_styles():
    text = ("**Goal:**\n- rename parse_cfg\n**Progress and decisions**\n- read 40 files\n"
            "### Constraints and preferences\n- keep tag\n# Key facts (paths, ids)\n- v9-TEST\n"
            "## Current state\n- nothing changed\n## Next steps\n1. patch\n2. changelog\n")
    assert summary_problem(text) is None
    assert parse_summary(text)["next"] == ["patch", "changelog"]


def test_insert_items_adds_to_the_key_facts_section():
    text = render_summary({"facts": ["[id] a"], "state": ["s"]})
    out = insert_items(text, "facts", ["[version] v9-TEST (stated by user)"])
    assert parse_summary(out)["facts"] == ["[id] a", "[version] v9-TEST (stated by user)"]
    assert parse_summary(out)["state"] == ["s"]


def test_extractive_summary_uses_the_todo_board_and_notes():
    messages = [{"role": "user", "content": "Never touch vendor/. Keep tests green."},
                {"role": "assistant", "content": "Reading.", "tool_calls": [call("c", command="ls src")]},
                {"role": "tool", "tool_call_id": "c", "content": "a.py"}]
    state = {"todos": [{"content": "read code", "status": "completed"}, {"content": "patch", "status": "in_progress"},
                       {"content": "changelog", "status": "pending"}],
             "notes": [{"id": "n1", "title": "design decisions", "content": "..."}]}
    parsed = parse_summary(extractive_summary(messages, state, focus="the vendor rule"))
    assert "Done: read code" in parsed["progress"] and "Note kept: design decisions" in parsed["progress"]
    assert parsed["state"][0] == "In progress: patch" and parsed["next"][0] == "changelog"
    assert "Never touch vendor/." in parsed["constraints"]
    assert "Focus requested for this compaction: the vendor rule" in parsed["goal"]
    assert "[command] ls src" in parsed["facts"]


def test_user_facts_include_those_of_earlier_summaries():
    earlier = summary_message(render_summary({"facts": ["[id] ORD-7781 (stated by user)", "[id] helper"]}))
    found = user_facts([earlier, {"role": "user", "content": "and port 8443"}])
    assert [fact_span(f) for f in found] == ["ORD-7781", "port 8443"]
