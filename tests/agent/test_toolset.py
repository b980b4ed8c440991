"""`build_registry`: the agent's whole tool set, valid for OpenAI, each tool on the
repository's own state (`<repo>/.ctxagent/`), and the tools working together through
the real loop (plan -> todo board, patch -> fresh context_fetch results)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from ctxagent.agent.loop import Agent
from ctxagent.agent.session import Session
from ctxagent.agent.toolset import build_registry
from ctxagent.config.settings import LOCAL_PROVIDER, LOCAL_TOOLS, AgentSettings, Settings, load_settings
from ctxagent.errors import ConfigError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools import TOOLS
from ctxagent.validation import Secret
from tests.support.fake_openai import text, tool_calls

ALL_TOOLS = ["terminal", "apply_patch", "context_fetch", "note", "todo", "plan", "memory", "rag", "python_exec",
             "skill", "memory_file", "delegate"]
#: What is offered in the default (read-only) mode where no skill is installed: python_exec needs
#: workspace-write mode, `skill` has nothing to offer, and `delegate` is added by `open_agent`
#: (it runs child agents), so build_registry leaves the three out.
OFFERED = [name for name in ALL_TOOLS if name not in ("skill", "python_exec", "delegate")]


@pytest.fixture(autouse=True)
def _no_user_skills(tmp_path, monkeypatch) -> None:
    """HOME without skills, so the tools offered do not depend on the machine."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _settings(base_url: str = "http://127.0.0.1:9/v1") -> Settings:
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=base_url,
                                        api_key=Secret("sk-test"), max_retries=0, timeout_s=10),
                    agent=AgentSettings(auto_approve=True))


@pytest.fixture
def registry(tmp_path):
    return build_registry(tmp_path, _settings())


def test_every_tool_is_registered_once(registry) -> None:
    assert registry.names() == OFFERED
    assert len(set(registry.names())) == len(registry.names())


def test_every_schema_is_valid_for_openai(registry) -> None:
    for schema in registry.schemas():
        assert schema["type"] == "function"
        function = schema["function"]
        assert NAME.match(function["name"]), function["name"]
        assert isinstance(function["description"], str) and function["description"].strip()
        params = function["parameters"]
        assert params["type"] == "object", function["name"]
        jsonschema.Draft202012Validator.check_schema(params)
        json.dumps(schema)  # plain JSON, nothing pydantic-specific left


def test_state_tools_use_the_repository_state_dir(tmp_path, registry) -> None:
    state = tmp_path / ".ctxagent"
    assert registry.get("note").run({"action": "create", "title": "t", "content": "c"})
    assert list((state / "notes").glob("*.md"))
    registry.get("todo").run({"action": "add", "content": "first step"})
    assert (state / "todos.json").is_file()
    registry.get("memory").run({"action": "add", "content": "we deploy with uv"})
    assert (state / "memory.db").is_file()
    assert registry.get("rag").run({"action": "add_text", "text": "The API allows 60 requests per minute."})
    assert list((state / "knowledge").glob("*.db"))


def test_memories_the_agent_adds_carry_the_session_id(tmp_path) -> None:
    memory = build_registry(tmp_path, _settings(), session_id="20260101-000000-abcd").get("memory")
    memory.run({"action": "add", "content": "the release tag is v9-TEST"})
    [hit] = memory.run({"action": "search", "query": "release tag"})
    assert hit["metadata"]["session_id"] == "20260101-000000-abcd"


def test_plan_without_a_client_is_refused_clearly(registry) -> None:
    result = registry.get("plan").execute({"goal": "add a dark mode switch"})
    assert not result.ok and "needs a model" in result.content


def _agent(tmp_path, server) -> Agent:
    settings = _settings(server.base_url)
    client = LLMClient(settings.model)
    session = Session.create(tmp_path, secrets=settings.secrets())
    registry = build_registry(tmp_path, settings, session_id=session.id, client=client)
    return Agent(client=client, registry=registry, session=session, settings=settings, system="test agent")


def test_plan_asks_the_model_and_loads_the_todo_board(tmp_path, fake_openai) -> None:
    steps = [{"title": f"Step {i}", "detail": f"do {i}", "validation": f"check {i}"} for i in range(1, 7)]
    plan = {"goal": "dark mode", "steps": steps, "risks": [{"risk": "r", "mitigation": "m"}]}
    server = fake_openai([tool_calls([("plan", json.dumps({"goal": "dark mode", "load_to_todo": True}))]),
                         text(json.dumps(plan)), text("Planned.")])
    agent = _agent(tmp_path, server)
    assert agent.run_turn("plan the dark mode work").answer == "Planned."
    board = agent.registry.get("todo").run({"action": "list"})
    assert [item["content"] for item in board][:6] == [f"Step {i}" for i in range(1, 7)]


def test_a_patch_refreshes_context_fetch_results(tmp_path, fake_openai) -> None:
    (tmp_path / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@ def greet():\n-    return 'hello'\n"
             "+    return 'bonjour_salutation'\n*** End Patch\n")
    fetch = {"query": "bonjour_salutation", "sources": ["files"]}
    server = fake_openai([tool_calls([("context_fetch", json.dumps(fetch))]),
                          tool_calls([("apply_patch", json.dumps({"patch": patch}))]),
                          tool_calls([("context_fetch", json.dumps(fetch))]), text("Done.")])
    agent = _agent(tmp_path, server)
    assert agent.run_turn("greet in French").answer == "Done."
    before, patched, after = [m["content"] for m in agent.session.history if m["role"] == "tool"]
    assert "app.py" not in before and patched.startswith("Patch applied")
    assert "app.py" in after and "bonjour_salutation" in after


def _local_settings(base_url: str) -> Settings:
    """Settings as the bundled offline model gets them (ctxagent.llm.local.bundle.local_model_settings)."""
    return Settings(model=ModelSettings(provider=LOCAL_PROVIDER, model="smollm2-135m-instruct", base_url=base_url,
                                        max_retries=0, timeout_s=10, empty_content="empty"))


def _offered(tmp_path, fake_openai, settings: Settings) -> list[str]:
    """The tool names the loop sends in its first request, wired as `open_agent` wires them."""
    server = fake_openai([text("ok")])
    settings = settings.replace(model=settings.model.replace(base_url=server.base_url))
    client = LLMClient(settings.model)
    session = Session.create(tmp_path, secrets=settings.secrets())
    registry = build_registry(tmp_path, settings, session_id=session.id, client=client,
                              only=settings.agent.tool_names(settings.model.provider))
    Agent(client=client, registry=registry, session=session, settings=settings, system="t").run_turn("hi")
    return [t["function"]["name"] for t in server.requests[0]["tools"]]


def test_the_offline_model_is_offered_only_terminal_and_apply_patch(tmp_path, fake_openai) -> None:
    assert _offered(tmp_path, fake_openai, _local_settings("http://127.0.0.1:9/v1")) == ["terminal", "apply_patch"]
    assert not (tmp_path / ".ctxagent" / "memory.db").exists(), "a tool left out is never opened"


def test_a_real_provider_is_offered_every_tool(tmp_path, fake_openai) -> None:
    assert ALL_TOOLS == list(TOOLS)
    assert _offered(tmp_path, fake_openai, _settings()) == OFFERED


@pytest.mark.parametrize(("provider", "tools", "expected"), [
    ("local", "all", OFFERED),
    ("local", ["note", "terminal"], ["terminal", "note"]),  # always in TOOLS order
    ("custom", ["terminal", "apply_patch"], ["terminal", "apply_patch"]),
    ("deepseek", ["rag", "rag"], ["rag"]),
    ("custom", None, OFFERED),
    ("local", None, list(LOCAL_TOOLS)),
])
def test_agent_tools_setting_chooses_the_tools(tmp_path, provider, tools, expected) -> None:
    only = AgentSettings(tools=tools).tool_names(provider)
    assert build_registry(tmp_path, _settings(), only=only).names() == expected


def _user_config(tmp_path, toml: str) -> dict[str, str]:
    """An environment whose user config file (`$XDG_CONFIG_HOME/ctxagent/config.toml`) holds `toml`."""
    (tmp_path / "xdg" / "ctxagent").mkdir(parents=True)
    (tmp_path / "xdg" / "ctxagent" / "config.toml").write_text(toml, encoding="utf-8")
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize("tools", [["terminal", "bogus_tool"], ["bogus_tool"]])
def test_an_unknown_tool_name_is_a_config_error_naming_it(tmp_path, tools) -> None:
    env = _user_config(tmp_path, f"[agent]\ntools = {json.dumps(tools)}\n")
    settings = load_settings(tmp_path, env=env, require_key=False)
    with pytest.raises(ConfigError, match=r"agent\.tools.*'bogus_tool'.*the tools are terminal, apply_patch") as info:
        build_registry(tmp_path, settings, only=settings.agent.tool_names(settings.model.provider))
    assert "config.toml" in str(info.value) and info.value.setting == "agent.tools"
    assert not (tmp_path / ".ctxagent" / "memory.db").exists(), "nothing is opened before the names are checked"


def test_an_empty_tool_list_is_refused(tmp_path) -> None:
    env = _user_config(tmp_path, "[agent]\ntools = []\n")
    with pytest.raises(ConfigError, match='at least one tool, or use "all"'):
        load_settings(tmp_path, env=env, require_key=False)
