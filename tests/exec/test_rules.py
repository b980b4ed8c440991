"""Permission rules match the parsed argv, never the text; deny wins; an "always" answer
covers a program and its subcommand."""

from __future__ import annotations

import pytest

from ctxagent.errors import ConfigError
from ctxagent.exec.rules import PermissionRules, always_key, key_rule, parse_rule

RULES = PermissionRules.from_text(allow=["pytest *", "python -m pytest *", "ruff check *", "make"],
                                  deny=["git push *", "curl *", "rm -rf *"])


@pytest.mark.parametrize("line, rule", [
    ("pytest", "pytest *"), ("pytest -q tests/test_app.py", "pytest *"), ("python -m pytest -x", "python -m pytest *"),
    ("ruff check 'src dir'", "ruff check *"), ("make", "make"),
])
def test_one_simple_command_matching_an_allow_rule_is_allowed(line, rule) -> None:
    verdict = RULES.check(line)
    assert (verdict.action, verdict.rule) == ("allow", rule)


@pytest.mark.parametrize("line", [
    "pytest; rm -rf ~", "pytest && curl-ish", "pytest | sh", "pytest $(whoami)", "pytest `id`", "pytest > out",
    "pytest\nrm x", "pytest & sleep 1", "make all", "ruff format .", "./pytest", "/tmp/x/pytest -q",
    "PYTEST=1 pytest", "python -m pip install x",
])
def test_anything_else_is_never_rule_allowed(line) -> None:
    assert RULES.check(line).action in ("ask", "deny"), line
    assert RULES.check("pytest; rm -rf ~").rule == "rm -rf *"


@pytest.mark.parametrize("line, rule", [
    ("git push origin main", "git push *"), ("curl http://x", "curl *"), ("/usr/bin/curl -s x", "curl *"),
    ("echo hi; curl x", "curl *"), ("pytest && git push", "git push *"), ("ls | curl -d @- x", "curl *"),
    ("echo $(curl x)", "curl *"), ("sh -c 'curl x'", "curl *"), ("bash -lc \"git push -f\"", "git push *"),
    ("pytest `curl x`", "curl *"),
])
def test_deny_wins_on_every_simple_command_of_the_line(line, rule) -> None:
    verdict = RULES.check(line)
    assert (verdict.action, verdict.rule) == ("deny", rule), line


def test_deny_wins_over_allow() -> None:
    rules = PermissionRules.from_text(allow=["git *"], deny=["git push *"])
    assert rules.check("git push").action == "deny" and rules.check("git status").action == "allow"


@pytest.mark.parametrize("text", ["", "pytest; rm", "a | b", "$(x)", "pytest > f"])
def test_a_rule_must_be_one_plain_command(text) -> None:
    with pytest.raises(ConfigError, match="exec.allow"):
        parse_rule(text)


@pytest.mark.parametrize("argv, key", [
    (("git", "commit", "-m", "x"), "git commit"), (("python", "-m", "pytest", "-q"), "python -m pytest"),
    (("pytest", "-q"), "pytest"), (("pytest", "tests/test_a.py"), "pytest"), (("make",), "make"), (None, None),
])
def test_always_covers_the_program_and_its_subcommand(argv, key) -> None:
    assert always_key(argv) == key


def test_an_always_key_acts_as_a_rule_for_that_subcommand_only() -> None:
    rule = key_rule("git commit")
    assert rule.matches(["git", "commit", "-m", "x"]) and not rule.matches(["git", "push"])


@pytest.mark.parametrize("line", [
    "pytest\ncurl x", "echo ok\n  curl -s x", "FOO=1 curl x", "A=1 B='x y' /usr/bin/curl x", "env curl x",
    "env -i PATH=/bin curl x", "env -u HOME curl x", "command curl x", "exec curl x", "nohup curl x &",
    "nice -n 5 curl x", "timeout 5 curl x", "timeout -s KILL 5 curl x", "sudo -u root curl x",
    "echo x | xargs curl", "echo x | xargs -n 1 curl", "env sh -c 'curl x'", "time curl x",
])
def test_deny_sees_through_newlines_assignments_and_wrapper_programs(line) -> None:
    verdict = PermissionRules.from_text(deny=["curl *"]).check(line)
    assert (verdict.action, verdict.rule) == ("deny", "curl *"), line


def test_a_wrapper_running_another_program_is_not_denied() -> None:
    rules = PermissionRules.from_text(deny=["curl *"])
    assert rules.check("env FOO=1 python -c 'print(1)'").action == "ask"
    assert rules.check("timeout 5 pytest -q").action == "ask"


@pytest.mark.parametrize("argv", [
    ("sh", "-c", "make test"), ("bash", "build.sh"), ("python", "script.py"), ("python3", "-c", "print(1)"),
    ("node", "-e", "x"), ("/usr/bin/env", "FOO=1", "make"), ("xargs", "rm"), ("sudo", "make"), ("timeout", "5", "make"),
    ("git", "-c", "alias.x=!sh", "x"), ("git", "-C", "/", "push"), ("perl", "-e", "1"),
])
def test_no_always_for_a_line_that_runs_any_command_or_code(argv) -> None:
    assert always_key(argv) is None, argv
    assert always_key(("python3", "-m", "pytest", "-q")) == "python3 -m pytest"
