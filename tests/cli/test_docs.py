"""docs/cli.md, docs/configuration.md, docs/slash-commands.md and docs/batch.md cannot drift: their generated
blocks (command help, settings tables, the built-in slash commands) must equal what the code
produces now.

Regenerate after changing a command or a setting: `python -m tests.cli.test_docs --write`.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from ctxagent.cli.main import cli, register_commands
from ctxagent.config.settings import AgentSettings, HarnessSettings, ToolSettings
from ctxagent.config.state_settings import StateSettings
from ctxagent.llm.settings import ModelSettings
from ctxagent.mcp.settings import McpSettings
from ctxagent.validation import Record, fields

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"(<!-- generated:(\w+) (\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)
SECTIONS = {"model": ModelSettings, "agent": AgentSettings, "tools": ToolSettings, "harness": HarnessSettings,
            "state": StateSettings, "mcp": McpSettings}
PAGES = ("cli.md", "configuration.md", "slash-commands.md", "batch.md")


def help_text(name: str) -> str:
    """`ctxagent NAME --help` at 80 columns, as a fenced block."""
    result = CliRunner().invoke(register_commands(cli), [name, "--help"], prog_name="ctxagent",
                                terminal_width=80, max_content_width=80)
    return f"```text\n{result.output.rstrip()}\n```\n"


def field_docs(model: type[Record]) -> dict[str, str]:
    """The one-line docstring under each field of `model` (read from its source)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(model))).body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[node.target.id] = " ".join(str(after.value.value).split())
    return docs


def settings_table(section: str) -> str:
    """Markdown table of one config section: key, default, meaning."""
    model = SECTIONS[section]
    docs = field_docs(model)
    rows = ["| key | default | meaning |", "| --- | --- | --- |"]
    for field in fields(model):
        default = "(required)" if field.required else repr(field.default)
        rows.append(f"| `{field.name}` | `{default}` | {docs.get(field.name, '')} |")
    return "\n".join(rows) + "\n"


def slash_table() -> str:
    """Markdown table of the built-in chat slash commands, in /help order."""
    from ctxagent.cli.slash import module_commands  # not builtins(): a test may have registered more

    rows = ["| command | what it does |", "| --- | --- |"]
    rows += [f"| `{c.usage}` | {c.description} |" for c in module_commands().commands()]
    return "\n".join(rows) + "\n"


def generate(kind: str, arg: str) -> str:
    if kind == "slash":
        return slash_table()
    return help_text(arg) if kind == "help" else settings_table(arg)


def regenerate(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + generate(m.group(2), m.group(3)) + m.group(5), text)


def test_generated_blocks_match_the_code() -> None:
    for name in PAGES:
        text = (DOCS / name).read_text(encoding="utf-8")
        assert BLOCK.search(text), f"{name} has no generated blocks"
        assert regenerate(text) == text, f"docs/{name} is stale: run python -m tests.cli.test_docs --write"


def test_every_command_and_section_is_documented() -> None:
    register_commands()
    blocks = {(m.group(2), m.group(3)) for name in PAGES
              for m in BLOCK.finditer((DOCS / name).read_text(encoding="utf-8"))}
    for name in ("run", "chat", "sessions", "tool", "doctor"):
        assert ("help", name) in blocks
    for section in SECTIONS:
        assert ("settings", section) in blocks
    assert ("slash", "builtins") in blocks


if __name__ == "__main__" and "--write" in sys.argv:
    for doc in PAGES:
        path = DOCS / doc
        path.write_text(regenerate(path.read_text(encoding="utf-8")), encoding="utf-8")
