"""`ctxagent.storage.ids.resolve_id`: ids by unique prefix (issue 15, item 17)."""

from __future__ import annotations

import pytest

from ctxagent.errors import NotFoundError
from ctxagent.storage.ids import SHOWN, resolve_id

IDS = ["20260101-120000-aaaa", "20260101-120000-aabb", "20260102-090000-cccc"]


def test_an_exact_id_wins_even_when_it_prefixes_another() -> None:
    assert resolve_id("abc", ["abc", "abcd"], what="note", listing="x") == "abc"


def test_a_unique_prefix_names_its_id() -> None:
    assert resolve_id("20260102", IDS, what="session", listing="x") == "20260102-090000-cccc"


def test_an_ambiguous_prefix_lists_the_candidates() -> None:
    with pytest.raises(NotFoundError, match="ambiguous: it starts 2 session ids "
                                            r"\(20260101-120000-aaaa, 20260101-120000-aabb\); give more characters"):
        resolve_id("20260101", IDS, what="session", listing="x")


def test_many_candidates_are_cut_and_counted() -> None:
    ids = [f"n{i:02d}" for i in range(SHOWN + 3)]
    with pytest.raises(NotFoundError, match=r"and 3 more\)"):
        resolve_id("n", ids, what="note", listing="x")


@pytest.mark.parametrize("given", ["", "2025", "x"])
def test_no_match_says_how_to_list(given: str) -> None:
    with pytest.raises(NotFoundError, match="list them with `ctxagent sessions`"):
        resolve_id(given, IDS, what="session", listing="list them with `ctxagent sessions`")
