"""Approval answers: yes, no with a reason, all, unreadable answers, closed input."""

from __future__ import annotations

import pytest

from ctxagent.agent.approval import ApprovalPolicy, Decision, parse_answer


@pytest.mark.parametrize("text, decision", [
    ("y", Decision(True)), ("YES", Decision(True)), (" a ", Decision(True, all=True)), ("all", Decision(True, all=True)),
    ("n", Decision(False)), ("no", Decision(False)), ("n use a dataclass", Decision(False, "use a dataclass")),
    ("no: wrong file", Decision(False, "wrong file")), ("n: x", Decision(False, "x")), ("No, later", Decision(False, "later")),
])
def test_parse_answer(text: str, decision: Decision) -> None:
    assert parse_answer(text) == decision


@pytest.mark.parametrize("text", ["", "maybe", "yess", "nope"])
def test_unreadable_answers_are_none(text: str) -> None:
    assert parse_answer(text) is None


def test_all_approves_the_rest_of_the_session() -> None:
    answers = iter(["a"])
    policy = ApprovalPolicy(ask=lambda q: next(answers))
    assert policy.decide("apply_patch", "diff").approved
    assert policy.decide("apply_patch", "diff").approved  # not asked again (iterator would raise)


def test_reasks_on_bad_answers_then_refuses() -> None:
    answers = iter(["what", "y"])
    assert ApprovalPolicy(ask=lambda q: next(answers)).decide("t", "p") == Decision(True)
    assert not ApprovalPolicy(ask=lambda q: "hmm").decide("t", "p").approved


def test_closed_input_and_no_asker_refuse() -> None:
    assert not ApprovalPolicy(ask=lambda q: None).decide("t", "p").approved
    assert "--yes" in ApprovalPolicy().decide("t", "p").reason
    assert ApprovalPolicy(auto_approve=True).decide("t", "p").approved
