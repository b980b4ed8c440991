"""Commands and python_exec are decided apart from patches: --yes never approves them,
--allow-exec does; "always" covers one program and subcommand for the session and can be
revoked; refusals carry the reason."""

from __future__ import annotations

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.exec.gate import ExecPolicy
from ctxagent.exec.rules import PermissionRules

POLICY = ExecPolicy(mode="workspace-write", rules=PermissionRules.from_text(allow=["pytest *"]))


def gate(line: str):
    return POLICY.command_gate(line, details=["cwd: ."])


def answers(*lines: str):
    queue, asked = list(lines), []

    def ask(question: str) -> str | None:
        asked.append(question)
        return queue.pop(0) if queue else None

    return ask, asked


def test_yes_approves_patches_but_never_commands() -> None:
    policy = ApprovalPolicy(auto_approve=True)
    assert policy.decide("apply_patch", "diff").approved
    decision = policy.decide_gate(gate("make test"))
    assert not decision.approved and "--allow-exec" in decision.reason


def test_allow_exec_and_rules_approve_without_asking() -> None:
    ask, asked = answers()
    assert ApprovalPolicy(ask=ask, allow_exec=True).decide_gate(gate("make test")).approved
    allowed = gate("pytest -q")
    assert ApprovalPolicy(ask=ask).gate_pre_approved(allowed) == "allowed by the rule `pytest *`"
    assert ApprovalPolicy(ask=ask).decide_gate(allowed).approved and asked == []


def test_always_covers_the_program_and_subcommand_until_revoked() -> None:
    ask, asked = answers("a", "n not that one")
    policy = ApprovalPolicy(ask=ask)
    assert policy.decide_gate(gate("git commit -m one")).approved
    assert policy.grants == {"git commit": "terminal"}
    assert policy.decide_gate(gate("git commit -m two")).approved and len(asked) == 1
    refused = policy.decide_gate(gate("git push"))
    assert not refused.approved and refused.reason == "not that one"
    assert "[a]lways `git push` this session" in asked[-1]
    assert policy.revoke("git commit") and not policy.revoke("git commit")
    assert not policy.decide_gate(gate("git commit -m three")).approved  # asked again: no answer left


def test_a_line_no_rule_can_cover_is_approved_once_by_always() -> None:
    ask, asked = answers("a")
    policy = ApprovalPolicy(ask=ask)
    assert policy.decide_gate(gate("make && make install")).approved and policy.grants == {}
    assert "this once" in asked[0]


def test_read_only_mode_and_deny_refuse_before_asking() -> None:
    assert "--mode workspace-write" in ExecPolicy().command_gate("make", details=[]).refusal
    deny = ExecPolicy(mode="workspace-write", rules=PermissionRules.from_text(deny=["curl *"]))
    assert "deny rule `curl *`" in deny.command_gate("curl x", details=[]).refusal
    assert "--mode workspace-write" in ExecPolicy().code_gate("print(1)", details=[]).refusal
