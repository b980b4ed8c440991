"""An unreadable approval answer is named with the valid ones before the question comes
again (issue 15, item 17); the real ApprovalPolicy with a scripted `ask`."""

from __future__ import annotations

from ctxagent.agent.approval import GATE_QUESTION, MAX_BAD_ANSWERS, QUESTION, ApprovalPolicy, not_an_answer
from ctxagent.exec.gate import Gate


def _asker(answers: list[str | None]):
    asked: list[str] = []

    def ask(question: str) -> str | None:
        asked.append(question)
        return answers.pop(0) if answers else None

    return ask, asked


def test_the_second_question_says_why_and_what_is_valid() -> None:
    ask, asked = _asker(["sure", "y"])
    assert ApprovalPolicy(ask=ask).decide("apply_patch", "diff").approved
    assert asked[0] == QUESTION
    assert asked[1] == not_an_answer("sure") + QUESTION
    assert "'sure' is not an answer: type y (yes), n (no;" in asked[1] and "a (all / always)" in asked[1]


def test_an_empty_line_is_named_as_such() -> None:
    assert not_an_answer("   ").startswith("an empty line is not an answer")


def test_a_long_answer_is_shown_cut_on_one_line() -> None:
    shown = not_an_answer("x" * 100 + "\n" + "y")
    assert shown.count("\n") == 1 and "x" * 41 not in shown


def test_too_many_bad_answers_refuse_and_count_the_tries() -> None:
    ask, asked = _asker(["?"] * MAX_BAD_ANSWERS)
    decision = ApprovalPolicy(ask=ask).decide("apply_patch", "diff")
    assert not decision.approved and decision.reason == f"no valid answer after {MAX_BAD_ANSWERS} tries"
    assert len(asked) == MAX_BAD_ANSWERS


def test_commands_get_the_same_help_and_always_still_grants() -> None:
    ask, asked = _asker(["what", "a"])
    policy = ApprovalPolicy(ask=ask)
    gate = Gate("terminal", "pytest -q", "bash", key="pytest")
    assert policy.decide_gate(gate).approved and policy.grants == {"pytest": "terminal"}
    assert asked[1].startswith("'what' is not an answer") and asked[1].endswith(GATE_QUESTION.format(what="`pytest`"))


def test_input_closing_after_a_bad_answer_refuses() -> None:
    ask, _ = _asker(["hmm"])
    decision = ApprovalPolicy(ask=ask).decide("apply_patch", "diff")
    assert not decision.approved and decision.reason == "no answer (input closed)"
