"""ctxagent.validation: records built from JSON-like data, their errors, their JSON Schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import msgspec
import pytest
from msgspec import Meta

from ctxagent.validation import Invalid, Record, Secret, field_names, fields, json_schema, validate


class Step(Record):
    title: Annotated[str, Meta(min_length=1, description="What to do.")]
    done: bool = False


class Args(Record):
    command: Annotated[str, Meta(description="The command.")]
    timeout_s: Annotated[float, Meta(gt=0, le=600)] | None = None
    count: Annotated[int, Meta(ge=1, description="How many.")] = 3
    mode: Literal["a", "b"] = "a"
    steps: list[Step] = msgspec.field(default_factory=list)
    session: Annotated[str | None, Meta(extra={"internal": True})] = None

    def __post_init__(self) -> None:
        if self.command == "rm -rf /":
            raise ValueError("not that command")


class Conf(Record):
    key: Secret | None = None
    where: str = "."


def test_lax_reads_numbers_and_booleans_written_as_text() -> None:
    got = validate(Args, {"command": "ls", "count": "5", "timeout_s": "2.5"}, strict=False)
    assert (got.count, got.timeout_s) == (5, 2.5)


def test_strict_refuses_a_boolean_for_an_integer() -> None:
    with pytest.raises(Invalid) as err:
        validate(Args, {"command": "ls", "count": True})
    assert err.value.loc == ("count",) and "int" in err.value.msg


@pytest.mark.parametrize(("data", "loc", "words"), [
    ({"command": "ls", "count": 0}, ("count",), ">= 1"),
    ({"command": "ls", "steps": [{"title": "a"}, {"title": ""}]}, ("steps", 1, "title"), "length >= 1"),
    ({"command": "ls", "mode": "c"}, ("mode",), "'c'"),
    ({}, ("command",), "required"),
    ({"command": "ls", "steps": [{"done": True}]}, ("steps", 0, "title"), "required"),
    ({"command": "ls", "comand": "x"}, (), "unknown field `comand`"),
    ({"command": "rm -rf /"}, (), "not that command"),
])
def test_an_error_says_where_and_what(data: dict, loc: tuple, words: str) -> None:
    with pytest.raises(Invalid) as err:
        validate(Args, data)
    assert err.value.loc == loc and words in err.value.msg
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_finite_refuses_nan_and_infinities_anywhere(bad: float) -> None:
    with pytest.raises(Invalid) as err:
        validate(Args, {"command": "ls", "timeout_s": bad}, finite=True)
    assert err.value.loc == ("timeout_s",) and "finite" in err.value.msg


def test_the_schema_is_inlined_without_titles_or_internal_fields() -> None:
    schema = json_schema(Args)
    assert "$ref" not in repr(schema) and "$defs" not in schema and "title" not in schema
    assert schema["type"] == "object" and schema["required"] == ["command"] and schema["additionalProperties"] is False
    assert "session" not in schema["properties"]
    item = schema["properties"]["steps"]["items"]
    assert item["properties"]["title"] == {"description": "What to do.", "type": "string", "minLength": 1}
    assert "title" in item["properties"] and item["required"] == ["title"]  # a property named title is kept
    assert schema["properties"]["count"]["description"] == "How many."


def test_a_description_inside_any_of_moves_up_to_the_property() -> None:
    class Opt(Record):
        path: Annotated[str, Meta(description="A file.")] | None = None

    prop = json_schema(Opt)["properties"]["path"]
    assert prop["description"] == "A file." and all("description" not in b for b in prop["anyOf"])


def test_fields_give_defaults_bounds_and_descriptions() -> None:
    specs = {f.name: f for f in fields(Args)}
    assert specs["count"].default == 3 and specs["count"].bounds == {"ge": 1} and specs["count"].annotation is int
    assert specs["timeout_s"].bounds == {"gt": 0, "le": 600}
    assert specs["steps"].default == [] and specs["command"].required and specs["session"].internal
    assert field_names(Args) == tuple(specs)


def test_a_secret_never_shows_but_compares_by_value() -> None:
    conf = validate(Conf, {"key": "sk-live-123456"})
    assert isinstance(conf.key, Secret) and conf.key.get_secret_value() == "sk-live-123456"
    assert "sk-live" not in repr(conf) and "sk-live" not in str(conf.to_dict())
    assert conf.key == Secret("sk-live-123456") and conf.key != Secret("other")


def test_replace_and_to_dict() -> None:
    conf = Conf(where="a").replace(where=str(Path("b")))
    assert conf.where == "b" and Conf().to_dict() == {"key": None, "where": "."}
    assert validate(Args, {"command": "ls", "steps": [{"title": "x"}]}).to_dict()["steps"] == [{"title": "x", "done": False}]


def test_a_bad_choice_lists_the_choices() -> None:
    class Pick(Record):
        mode: Literal["add", "list"] | None = None
        steps: list[Args] = msgspec.field(default_factory=list)

    with pytest.raises(Invalid) as err:
        validate(Pick, {"mode": "frobnicate"})
    assert err.value.loc == ("mode",) and err.value.msg == "Invalid enum value 'frobnicate'; use one of 'add', 'list'"
    with pytest.raises(Invalid) as err:
        validate(Pick, {"steps": [{"command": "ls", "mode": "z"}]})
    assert err.value.loc == ("steps", 0, "mode") and err.value.msg.endswith("use one of 'a', 'b'")


def test_a_bad_value_in_a_table_names_its_key() -> None:
    class Env(Record):
        env: dict[str, str] = msgspec.field(default_factory=dict)

    with pytest.raises(Invalid) as err:
        validate(Env, {"env": {"A": "x", "B": 1}})
    assert err.value.loc == ("env", "B") and "got `int`" in err.value.msg


@pytest.mark.parametrize("bad", [float("nan"), "nan", "-inf"])
def test_nan_against_a_bound_is_called_not_finite(bad: float | str) -> None:
    with pytest.raises(Invalid) as err:
        validate(Args, {"command": "ls", "timeout_s": bad}, strict=False)
    assert err.value.loc == ("timeout_s",) and err.value.msg.startswith("Expected a finite number, got ")
