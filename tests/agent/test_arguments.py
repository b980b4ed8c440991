"""L01: tool-call arguments that are not a JSON object are never run."""

from __future__ import annotations

import pytest

from ctxagent.agent.arguments import parse_arguments


@pytest.mark.parametrize("raw, finish, needle", [
    ('{"path": "src/ma', "length", "Unterminated string"),
    ('{"a":1}{"b":2}', "tool_calls", "extra data"),
    ("[1, 2]", "tool_calls", "array"),
    ('"text"', None, "string"),
    ("null", None, "null"),
    ("{'a': 1}", None, "property name"),
])
def test_L01_invalid_arguments(raw: str, finish: str | None, needle: str) -> None:
    parsed = parse_arguments(raw, finish_reason=finish)
    assert not parsed.ok and needle in parsed.problem
    assert parsed.truncated == (finish == "length")


@pytest.mark.parametrize("raw", ["", "   ", None])
def test_L01_empty_means_no_arguments(raw: str | None) -> None:
    assert parse_arguments(raw).args == {} and parse_arguments(raw).ok


def test_L01_valid_passes_unchanged() -> None:
    assert parse_arguments('{"pattern": "a\\\\d+"}').args == {"pattern": "a\\d+"}
    assert parse_arguments('{"nested": {"x": [1, 2]}}').args == {"nested": {"x": [1, 2]}}
