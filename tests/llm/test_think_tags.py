"""C06 neighbour: a leading <think>...</think> block in content is reasoning, however it is split."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxagent.llm.think_tags import ThinkTagSplitter
from tests.llm.conftest import USER
from tests.support.fake_openai import text


def _split(content: str, cuts: list[int]) -> tuple[str, str]:
    splitter = ThinkTagSplitter()
    points = sorted({c % (len(content) + 1) for c in cuts} | {0, len(content)})
    pieces = []
    for a, b in zip(points, points[1:]):
        pieces += splitter.feed(content[a:b])
    pieces += splitter.flush()
    return ("".join(p for k, p in pieces if k == "text"), "".join(p for k, p in pieces if k == "reasoning"))


_body = st.text(alphabet=st.sampled_from(list("ab <>/\nthink")), max_size=30)


@given(reasoning=_body.filter(lambda r: "</think>" not in r), answer=_body, cuts=st.lists(st.integers(0, 200)))
def test_leading_think_block_goes_to_reasoning_for_any_split(reasoning, answer, cuts):
    got_text, got_reasoning = _split(f"\n<think>{reasoning}</think>\n\n{answer}", cuts)
    assert got_reasoning == reasoning
    assert got_text == answer.lstrip()


@given(content=_body, cuts=st.lists(st.integers(0, 200)))
def test_content_without_a_leading_block_is_unchanged(content, cuts):
    if content.lstrip().startswith("<think>"):
        return
    assert _split(content, cuts) == (content, "")


def test_think_later_in_the_text_is_plain_text():
    assert _split("Use <think> tags like <think>x</think>.", [3, 9]) == (
        "Use <think> tags like <think>x</think>.", "")


def test_unclosed_block_at_end_of_stream_is_reasoning():
    assert _split("<think>still thinking", [4, 11]) == ("", "still thinking")


def test_think_tags_from_the_server_never_reach_content(fake_openai, make_client):
    server = fake_openai([text("<think>Check the file first.</think>\n\nIt is 42.", chunk_size=3)])
    deltas = []
    reply = make_client(server).chat(USER, on_delta=deltas.append)
    assert reply.content == "It is 42." and reply.reasoning_content == "Check the file first."
    assert "".join(d.text for d in deltas if d.kind == "text") == "It is 42."
