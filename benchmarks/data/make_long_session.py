"""Write `long_session.jsonl`: a recorded-style coding session for `compaction_facts.py`.

A user migrates a billing service's config loader from INI to TOML. Four user messages
state paths, ids, numbers and rules (the key facts, listed in `long_session_facts.json`
with the message that states each); 66 tool rounds (rg, cat, pytest, apply_patch) with
realistic outputs of 600 to 4,000 characters sit between them. Lines use the session
transcript format: `{"kind": "message", "ts": ..., "message": {...}}`. Deterministic:
run `python benchmarks/data/make_long_session.py` to rebuild the two files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
USER = [
    ("Migrate the billing service config loader from INI to TOML. Files: services/billing/config_loader.py "
     "reads services/billing/settings.ini today; the new file is services/billing/settings.toml. Tests live in "
     "tests/billing/test_config_loader.py. Ticket BILL-2291. Keep the public function load_settings(path) "
     "unchanged. The default port must stay 8443, the retry budget is 5 attempts and the timeout 12.5 seconds. "
     "Target Python 3.11. The release tag will be v4.2.0-rc1."),
    ("FYI: the staging DB host is db-stg-03.internal and the migration id is 20240611_0042. "
     "Don't touch services/payments/ at all. Use tomllib from the standard library, not the toml package."),
    ("Also update CHANGELOG.md under the 4.2.0 heading and mention BILL-2291. Coverage must stay above 87%. "
     "The on-call reviewer is @mhernandez."),
    "Last thing: bump the version in pyproject.toml to 4.2.0rc1 and run `make lint` before you finish.",
]
FACTS = [
    (0, "services/billing/config_loader.py"), (0, "services/billing/settings.ini"),
    (0, "services/billing/settings.toml"), (0, "tests/billing/test_config_loader.py"), (0, "BILL-2291"),
    (0, "load_settings(path)"), (0, "8443"), (0, "5 attempts"), (0, "12.5 seconds"), (0, "Python 3.11"),
    (0, "v4.2.0-rc1"), (1, "db-stg-03.internal"), (1, "20240611_0042"), (1, "services/payments/"),
    (1, "tomllib"), (2, "CHANGELOG.md"), (2, "4.2.0 heading"), (2, "87%"), (2, "@mhernandez"),
    (3, "pyproject.toml"), (3, "4.2.0rc1"), (3, "make lint"),
]
ROUNDS_BEFORE = {0: 0, 1: 24, 2: 44, 3: 60}  # user message i comes before tool round n
TOTAL_ROUNDS = 66
MODULES = ["config_loader", "settings", "retry", "client", "ledger", "invoice", "tax", "currency", "audit", "export"]


def code_file(rng: random.Random, name: str, lines: int) -> str:
    out = [f'"""{name}: part of the billing service."""', "", "from __future__ import annotations", ""]
    for i in range(lines // 6):
        fn = f"{rng.choice(['load', 'parse', 'merge', 'check', 'render'])}_{rng.choice(MODULES)}_{i}"
        out += [f"def {fn}(value, *, strict=False):", f'    """Return the {fn.replace("_", " ")}."""',
                "    if strict and not value:", f"        raise ValueError('{fn}: empty value')",
                f"    return value  # {rng.randint(100, 999)}", ""]
    return "\n".join(out)


def pytest_output(rng: random.Random, failing: bool, n: int) -> str:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.9, pytest-8.2.0", f"collected {n} items", ""]
    lines += [f"tests/billing/test_config_loader.py::test_case_{i} PASSED" for i in range(n - (1 if failing else 0))]
    if failing:
        lines += ["tests/billing/test_config_loader.py::test_retry_budget FAILED", "", "=== FAILURES ===",
                  "    def test_retry_budget():", ">       assert load_settings(PATH).retry_budget == 5",
                  "E       KeyError: 'retry_budget'", "services/billing/config_loader.py:88: KeyError",
                  f"=== 1 failed, {n - 1} passed in {rng.uniform(0.5, 3):.2f}s ==="]
    else:
        lines.append(f"=== {n} passed in {rng.uniform(0.5, 3):.2f}s ===")
    return "\n".join(lines)


def tool_round(rng: random.Random, n: int) -> tuple[str, dict, str, str | None]:
    """(tool name, arguments, result, assistant text or None) of round n."""
    module = MODULES[n % len(MODULES)]
    kind = n % 6
    if kind == 0:
        pattern = rng.choice(["load_settings", "settings.ini", "configparser", "retry_budget"])
        hits = "\n".join(f"services/billing/{rng.choice(MODULES)}.py:{rng.randint(1, 300)}: {pattern}(...)"
                         for _ in range(rng.randint(12, 40)))
        return "terminal", {"command": f"rg -n {pattern} services/billing"}, hits, None
    if kind in (1, 2):
        path = f"services/billing/{module}.py"
        return "terminal", {"command": f"cat {path}"}, code_file(rng, path, rng.randint(60, 140)), None
    if kind == 3:
        failing = n < 50 and n % 4 == 3
        note = "The retry budget key is still read from the INI section." if failing else None
        return "terminal", {"command": "pytest -q tests/billing"}, pytest_output(rng, failing, rng.randint(8, 30)), note
    if kind == 4:
        patch = (f"*** Begin Patch\n*** Update File: services/billing/{module}.py\n@@\n-import configparser\n"
                 f"+import tomllib\n*** End Patch")
        return "apply_patch", {"patch": patch}, f"applied: 1 file changed (services/billing/{module}.py)", \
            f"Switched {module}.py to tomllib."
    return "terminal", {"command": "git diff --stat"}, "\n".join(
        f" services/billing/{m}.py | {rng.randint(2, 40)} ++--" for m in MODULES[: rng.randint(3, 9)]), None


def build() -> list[dict]:
    rng = random.Random(4242)
    messages: list[dict] = []
    for n in range(TOTAL_ROUNDS):
        for i, before in ROUNDS_BEFORE.items():
            if before == n:
                messages.append({"role": "user", "content": USER[i]})
        name, args, result, note = tool_round(rng, n)
        call_id = f"call_{n:03d}"
        messages.append({"role": "assistant", "content": note, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    messages.append({"role": "assistant", "content": "Done: the loader reads settings.toml with tomllib."})
    return messages


def main() -> None:
    lines = [json.dumps({"kind": "message", "ts": 1760000000 + 7 * i, "message": m}, ensure_ascii=False)
             for i, m in enumerate(build())]
    (HERE / "long_session.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    facts = [{"message": i, "fact": f} for i, f in FACTS]
    (HERE / "long_session_facts.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
