"""`feedback()` keeps the line structure of every loop message (issue 15, item 1)."""

from __future__ import annotations

from ctxagent.agent.prompts import feedback, tidy_lines

QUOTED = "hunk was not found in a.py. Expected these lines:\n    def f():\n        return 1\n"


def test_invalid_preview_keeps_the_error_lines_and_indentation() -> None:
    out = feedback("invalid_preview", name="apply_patch", error=QUOTED)
    assert out.split("\n") == ["Error: this apply_patch call was not run because its arguments are invalid: "
                               "hunk was not found in a.py. Expected these lines:", "    def f():", "        return 1"]


def test_refused_keeps_the_reason_on_its_own_line() -> None:
    out = feedback("refused", name="terminal", reason="not now")
    assert out.split("\n") == ["The user declined this terminal call; it was NOT executed.",
                               "The user's reason: not now",
                               "Do not resend the same call: change your approach, or answer and ask the user."]
    assert "\n\n" not in feedback("refused", name="terminal", reason="")


def test_invalid_arguments_without_truncation_has_no_blank_line() -> None:
    out = feedback("invalid_arguments", name="x", problem="Expecting value", truncated=False)
    assert out.split("\n")[-1] == "Resend the call with the arguments as one complete JSON object."
    assert all(line.strip() for line in out.split("\n"))


def test_tidy_lines_trims_ends_and_blank_runs_but_keeps_indentation() -> None:
    assert tidy_lines("\n\n  a  \n\n\n\n    b\n\n") == "  a\n\n    b"
    assert tidy_lines("") == ""
