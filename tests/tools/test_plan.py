"""PlanTool against the real LLMClient and the fake OpenAI server (the model is the only fake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ctxagent.errors import ConfigError, LLMError, ToolInputError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools import PlanTool, TodoTool
from ctxagent.tools.plan import MAX_STEPS, MIN_STEPS, parse_plan, plan_markdown
from tests.support.fake_openai import FakeOpenAI, error, text


def _plan(n_steps: int = 6, **extra: Any) -> dict[str, Any]:
    steps = [{"title": f"Step {i}", "detail": f"do thing {i}", "validation": f"check {i}"}
             for i in range(1, n_steps + 1)]
    return {"goal": "Add a dark mode switch", "steps": steps,
            "risks": [{"risk": "styles leak", "mitigation": "snapshot tests"}], **extra}


@pytest.fixture
def client_for(fake_openai: Callable[..., FakeOpenAI]) -> Iterator[Callable[..., tuple[LLMClient, FakeOpenAI]]]:
    clients: list[LLMClient] = []

    def make(*steps: dict[str, Any]) -> tuple[LLMClient, FakeOpenAI]:
        server = fake_openai(list(steps))
        settings = ModelSettings(provider="custom", model="fake-model", base_url=server.base_url,
                                 api_key="sk-test-0123456789", max_retries=0)
        client = LLMClient(settings, sleep=lambda s: None)
        clients.append(client)
        return client, server

    yield make
    for client in clients:
        client.close()


def _prompt(server: FakeOpenAI, n: int = 0) -> str:
    return server.requests[n]["messages"][-1]["content"]


def test_plan_as_markdown_from_a_valid_json_reply(client_for, tmp_path: Path) -> None:
    client, server = client_for(text(json.dumps(_plan())))
    result = PlanTool(client).execute({"goal": "Add a dark mode switch",
                                       "constraints": ["no new dependencies", "keep the API"]})
    assert result.ok
    assert result.content.startswith("# Plan: Add a dark mode switch")
    assert "1. **Step 1**: do thing 1\n   - Validation: check 1" in result.content
    assert "styles leak (mitigation: snapshot tests)" in result.content
    assert [s["title"] for s in result.data["steps"]] == [f"Step {i}" for i in range(1, 7)]
    prompt = _prompt(server)
    assert "Add a dark mode switch" in prompt and "- no new dependencies" in prompt
    assert f"{MIN_STEPS} to {MAX_STEPS}" in prompt
    assert len(server.requests) == 1 and "tools" not in server.requests[0]


def test_plan_as_json(client_for) -> None:
    client, _ = client_for(text("Here you go:\n```json\n" + json.dumps(_plan(5)) + "\n```"))
    result = PlanTool(client).execute({"goal": "g", "format": "json"})
    assert result.ok and json.loads(result.content)["steps"][4]["title"] == "Step 5"


def test_invalid_reply_gets_one_retry_with_the_validation_error(client_for) -> None:
    client, server = client_for(text(json.dumps(_plan(3))), text(json.dumps(_plan(7))))
    plan = PlanTool(client).run({"goal": "g"})
    assert len(plan["steps"]) == 7
    retry = server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert "steps: Expected `array` of length >= 5" in retry[-1]["content"]


@pytest.mark.parametrize("bad", [
    "I think you should start by reading the code.",           # no JSON at all
    '{"goal": "g", "steps": [',                                  # cut off
    json.dumps(_plan(13)),                                       # too many steps
    json.dumps({**_plan(), "risks": []}),                        # no risks
    json.dumps({**_plan(), "steps": [{"title": "", "detail": "d", "validation": "v"}] * 5}),
    json.dumps({"goal": "g", "steps": [{"title": "t"}] * 6, "risks": ["r"]}),  # no validation
])
def test_two_invalid_replies_end_in_a_clear_error(client_for, bad: str) -> None:
    client, server = client_for(text(bad), text(bad))
    result = PlanTool(client).execute({"goal": "g"})
    assert not result.ok and "did not return a valid plan after 2 attempts" in result.content
    assert len(server.requests) == 2
    with pytest.raises(LLMError):
        PlanTool(client).run({"goal": "g"})  # the script is exhausted: default "done" text


def test_load_to_todo_puts_every_step_on_the_board_in_one_write(client_for, tmp_path: Path) -> None:
    client, _ = client_for(text(json.dumps(_plan(6))))
    todo = TodoTool(tmp_path / "todos.json")
    todo.run({"action": "add", "content": "already there"})
    result = PlanTool(client, board=todo).execute({"goal": "g", "load_to_todo": True})
    assert result.ok and result.data["todo_ids"] == [2, 3, 4, 5, 6, 7]
    assert "Loaded 6 steps onto the todo board as items 2-7" in result.content
    board = todo.run({"action": "list"})
    assert [i["content"] for i in board] == ["already there"] + [f"Step {i}" for i in range(1, 7)]
    assert {i["status"] for i in board} == {"pending"}


def test_load_to_todo_action_takes_an_earlier_plan(tmp_path: Path) -> None:
    todo = TodoTool(tmp_path / "todos.json")
    data = PlanTool(board=todo).run({"action": "load_to_todo", "plan": _plan(5)})
    assert data["todo_ids"] == [1, 2, 3, 4, 5]
    with pytest.raises(ToolInputError, match="steps"):
        PlanTool(board=todo).run({"action": "load_to_todo", "plan": _plan(2)})
    with pytest.raises(ToolInputError, match="needs `plan`"):
        PlanTool(board=todo).run({"action": "load_to_todo"})
    assert len(todo.run({"action": "list"})) == 5


def test_missing_goal_client_or_board_are_clear_errors(client_for) -> None:
    with pytest.raises(ToolInputError, match="goal"):
        PlanTool(object()).run({"goal": "  "})
    with pytest.raises(ConfigError, match="needs a model") as no_model:
        PlanTool().run({"goal": "g"})
    assert "CTXAGENT_BASE_URL" in str(no_model.value) and "construct PlanTool" not in str(no_model.value)
    client, _ = client_for(text(json.dumps(_plan())))
    with pytest.raises(ConfigError, match="no todo board"):
        PlanTool(client).run({"goal": "g", "load_to_todo": True})


def test_model_errors_surface_as_llm_errors(client_for) -> None:
    client, _ = client_for(error(400, "bad request"))
    result = PlanTool(client).execute({"goal": "g"})
    assert not result.ok


def test_any_object_with_chat_is_a_client() -> None:
    class Scripted:
        def chat(self, messages: list[dict], tools: list | None = None) -> Any:
            return type("Reply", (), {"content": json.dumps(_plan(5, goal=""))})()

    plan = PlanTool(Scripted()).run({"goal": "ship it", "constraints": "one constraint"})
    assert plan["goal"] == "ship it" and plan["markdown"].startswith("# Plan: ship it")


def test_plain_string_risks_are_accepted() -> None:
    plan = parse_plan(json.dumps({**_plan(), "risks": ["flaky CI"]}))
    assert plan.risks[0].risk == "flaky CI" and "- flaky CI" in plan_markdown(plan)


def test_ctxagent_tool_plan_without_a_model_says_how_to_configure_one(tmp_path, monkeypatch) -> None:
    from tests.support.cli import invoke

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for name in ("CTXAGENT_BASE_URL", "CTXAGENT_MODEL", "CTXAGENT_API_KEY", "CTXAGENT_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    out = invoke(["tool", "plan", '{"goal": "add a flag"}', "--repo", str(tmp_path)])
    assert out.exit_code == 1 and "CTXAGENT_BASE_URL" in out.stderr and "construct PlanTool" not in out.output
