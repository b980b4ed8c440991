"""The one prompt loader (ctxagent.templates): every prompt file loads from the package that owns it."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from ctxagent.templates import Prompts, prompts, render

ROOT = Path(__file__).resolve().parent.parent / "ctxagent"
PROMPT_FILES = sorted(ROOT.rglob("prompts/*.md"))


@pytest.mark.parametrize("path", PROMPT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_prompt_file_compiles_through_its_package(path):
    package = ".".join(("ctxagent", *path.parent.parent.relative_to(ROOT).parts))
    assert isinstance(prompts(package).template(path.stem), jinja2.Template)


def test_missing_variable_fails_loudly():
    with pytest.raises(jinja2.UndefinedError):
        render("ctxagent.tools", "plan_retry")


def test_missing_file_names_the_package_folder():
    with pytest.raises(jinja2.TemplateNotFound, match="ctxagent/tools/prompts/nope.md"):
        Prompts("ctxagent.tools").render("nope")


def test_variables_named_like_parameters_pass_through():
    text = prompts("ctxagent.agent").macro("feedback", "unknown_tool", name="x", available=["a"])
    assert "x" in text
