"""ContextPacket, ContextConfig and Message: textbook conventions, with validation."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from ctxagent.context import ContextConfig, ContextPacket, Message
from ctxagent.context.packet import LAYERS


def test_packet_defaults_and_token_count() -> None:
    packet = ContextPacket("hello world")
    assert isinstance(packet.timestamp, datetime)
    assert packet.token_count >= 2 and packet.relevance_score is None
    assert packet.metadata == {} and packet.type == "custom" and packet.layer == "evidence"


@pytest.mark.parametrize("given, kept", [(0.5, 0.5), (0.93, 0.93), (1.7, 1.0), (-3, 0.0), (float("nan"), 0.0)])
def test_caller_relevance_is_kept_and_clamped(given: float, kept: float) -> None:
    assert ContextPacket("x", relevance_score=given).relevance_score == kept


def test_timestamps_as_datetime_float_or_iso() -> None:
    now = datetime.now()
    assert abs(ContextPacket("x", timestamp=now).epoch - now.timestamp()) < 1e-6
    assert ContextPacket("x", timestamp=1_700_000_000.0).epoch == 1_700_000_000.0
    assert ContextPacket("x", timestamp="2024-01-02T03:04:05+00:00").epoch == 1704164645.0
    yesterday = now - timedelta(days=1)
    assert ContextPacket("x", timestamp=yesterday).epoch < now.timestamp()


def test_packet_rejects_non_text_content() -> None:
    with pytest.raises(ValueError, match="content"):
        ContextPacket(123)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind, layer", [("instructions", "system"), ("memory", "memory"), ("rag", "evidence"),
                                          ("note", "evidence"), ("history", "history"), ("tool_result", "tool_results"),
                                          ("task", "current"), ("something_new", "evidence")])
def test_types_map_to_layers(kind: str, layer: str) -> None:
    assert ContextPacket("x", metadata={"type": kind}).layer == layer


def test_config_textbook_defaults_work() -> None:
    config = ContextConfig(max_tokens=3000, reserve_ratio=0.2, min_relevance=0.2, enable_compression=True)
    assert config.reserve_tokens == 600 and config.input_budget == 2400
    assert abs(sum(config.layer_shares.values()) - 1.0) < 1e-9 and set(config.layer_shares) == set(LAYERS)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"max_tokens": 10}, "max_tokens"), ({"max_tokens": 3.5}, "max_tokens"), ({"reserve_ratio": 1.5}, "reserve_ratio"),
        ({"reserve_ratio": -0.1}, "reserve_ratio"), ({"min_relevance": 2}, "min_relevance"),
        ({"recency_weight": 0.5, "relevance_weight": 0.7}, "relevance_weight + recency_weight"),
        ({"recency_weight": -0.3, "relevance_weight": 1.3}, "recency_weight"), ({"half_life_s": 0}, "half_life_s"),
        ({"dedup_threshold": 0}, "dedup_threshold"), ({"tool_result_max_chars": 10}, "tool_result_max_chars"),
        ({"layer_shares": {"bogus": 1.0}}, "layer_shares"), ({"layer_shares": {"memory": -1}}, "layer_shares"),
        ({"layer_shares": 5}, "layer_shares"), ({"layer_shares": {"history": "x"}}, "layer_shares"),
        ({"output_instructions": 5}, "output_instructions"),
    ],
)
def test_config_invalid_values_name_field_and_range(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError) as info:
        ContextConfig(**kwargs)
    assert field in str(info.value)
    assert "[" in str(info.value) or "must" in str(info.value)


@pytest.mark.parametrize("kwargs, needle", [
    ({"metadata": ["a"]}, "metadata must be a dict"),  # failed later, in build, with an AttributeError
    ({"timestamp": "yesterday"}, "timestamp must be"),  # was taken as now: recency 1.0
    ({"timestamp": float("inf")}, "timestamp must be finite"),
    ({"timestamp": True}, "timestamp must be"),
    ({"token_count": -5}, "token_count must be an integer >= 0"),
    ({"token_count": 2.5}, "token_count must be an integer >= 0"),
    ({"relevance_score": "high"}, "relevance_score must be a number"),
])
def test_packet_bad_fields_are_value_errors_naming_the_field(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ContextPacket("x", **kwargs)


def test_packet_metadata_may_be_any_mapping() -> None:
    from types import MappingProxyType

    packet = ContextPacket("x", metadata=MappingProxyType({"type": "note"}))
    assert packet.metadata == {"type": "note"} and packet.type == "note"


@pytest.mark.parametrize("field", ["enable_compression", "adaptive_layers"])
def test_config_switches_must_be_booleans(field: str) -> None:
    with pytest.raises(ValueError, match=f"ContextConfig.{field} must be True or False"):
        ContextConfig(**{field: "no"})  # a non-empty string was truthy: "no" meant yes


def test_config_from_mapping_rejects_unknown_keys() -> None:
    assert ContextConfig.from_mapping({"max_tokens": 4000}).max_tokens == 4000
    with pytest.raises(ValueError, match="unknown context setting"):
        ContextConfig.from_mapping({"max_tokenz": 4000})


def test_partial_layer_shares_are_merged_and_normalised() -> None:
    shares = ContextConfig(layer_shares={"evidence": 0.9}).layer_shares
    assert shares["evidence"] > shares["history"] and abs(sum(shares.values()) - 1) < 1e-9


def test_message_like_textbook() -> None:
    msg = Message(content="我正在开发一个数据分析工具", role="user", timestamp=datetime.now())
    assert msg.to_dict()["role"] == "user" and isinstance(msg.to_dict()["timestamp"], float)
    assert isinstance(Message("hi", "assistant").timestamp, datetime)
