"""docs/providers.md keeps up with the code: every preset, setting and error is documented."""

from __future__ import annotations

from pathlib import Path

import ctxagent.llm as llm
from ctxagent.llm.errors import ERROR_TABLE
from ctxagent.llm.presets import PRESETS
from ctxagent.llm.settings import ModelSettings
from ctxagent.validation import field_names

DOC = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text(encoding="utf-8")


def test_every_preset_with_its_url_and_key_variable_is_documented():
    for name, data in PRESETS.items():
        assert f"`{name}`" in DOC and data["base_url"] in DOC
        for var in (*data["key_env"], *data["base_url_env"]):
            assert var in DOC or not data["needs_key"], var


def test_every_setting_is_documented():
    for field in field_names(ModelSettings):
        assert f"`{field}`" in DOC, field


def test_every_error_in_the_table_is_documented():
    for rule in ERROR_TABLE.values():
        if rule.error.__name__ != "ProviderError":
            assert rule.error.__name__ in DOC, rule.error.__name__


def test_package_exports_resolve():
    for name in llm.__all__:
        assert getattr(llm, name) is not None
