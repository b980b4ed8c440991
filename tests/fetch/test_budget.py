"""Token budgets: the fair split, trimming, and the invariant that a source never
exceeds its budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.fetch.budget import count_tokens, fair_shares, fit_items, truncate_to
from ctxagent.fetch.hits import hit_tokens, make_hit, render_hit, trim_hit
from ctxagent.fetch.search import file_header, fit_groups
from ctxagent.text.tokens import estimate_tokens


def test_count_tokens_is_the_project_estimate() -> None:
    text = "def refresh(self) -> None:  # 刷新"
    assert count_tokens(text) == estimate_tokens(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2000), st.lists(st.integers(0, 500), max_size=30))
def test_fair_shares_are_max_min_fair(budget: int, needs: list[int]) -> None:
    shares = fair_shares(budget, needs)
    assert sum(shares) <= budget
    assert all(0 <= s <= n for s, n in zip(shares, needs))
    cut = [s for s, n in zip(shares, needs) if s < n]
    if cut:  # whoever is cut got at least as much as anyone else (up to rounding)
        assert min(cut) >= max(shares) - 1
        assert budget - sum(shares) < len(needs)


def test_fair_shares_example() -> None:
    assert fair_shares(100, [10, 80, 80]) == [10, 45, 45]
    assert fair_shares(0, [5]) == [0]


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=400), st.integers(0, 60))
def test_truncate_to_fits_or_gives_up(text: str, allowance: int) -> None:
    cut = truncate_to(text, allowance)
    assert cut is None or count_tokens(cut) <= allowance
    if count_tokens(text) <= allowance:
        assert cut == text


def _lines(n: int, width: int = 60) -> list[str]:
    return [f"line {i} " + "word " * (width // 5) for i in range(n)]


def test_trim_hit_drops_far_context_first() -> None:
    hit = make_hit(_lines(20), 10)
    full = hit_tokens(hit)
    trimmed = trim_hit(hit, full - 1)
    assert trimmed is not None and hit_tokens(trimmed) <= full - 1
    assert trimmed["text"] == hit["text"]
    assert len(trimmed["context_before"]) + len(trimmed["context_after"]) == 3
    assert trim_hit(hit, 3) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 40)), min_size=1, max_size=10),
       st.integers(20, 900))
def test_fit_groups_never_exceeds_the_budget(shape: list[tuple[int, int]], budget: int) -> None:
    lines = _lines(50, 80)
    groups = [{"path": f"pkg/file_{i}.py", "score": 1.0 / (i + 1),
               "hits": [make_hit(lines, (j * 7 + width) % 50) for j in range(n)]}
              for i, (n, width) in enumerate(shape)]
    fitted = fit_groups(groups, budget)
    text = "".join(file_header(g) + "".join(render_hit(h) for h in g["hits"]) for g in fitted)
    assert estimate_tokens(text) <= budget
    assert [g["path"] for g in fitted] == [g["path"] for g in groups[: len(fitted)]]


def test_fit_groups_splits_fairly_between_hits() -> None:
    lines = _lines(60, 120)
    groups = [{"path": f"f{i}.py", "score": 1.0, "hits": [make_hit(lines, 10 + 10 * j) for j in range(2)]}
              for i in range(3)]
    fitted = fit_groups(groups, 600)
    sizes = [hit_tokens(h) for g in fitted for h in g["hits"]]
    assert len(sizes) == 6
    assert max(sizes) - min(sizes) <= 12  # each hit got about an equal share (one line's granularity)


def test_fit_items_keeps_short_items_whole_and_cuts_long_ones() -> None:
    rows = [{"t": "short"}, {"t": "long " * 200}, {"t": "long " * 200}]
    fitted = fit_items(rows, 100, lambda r: f"- {r['t']}\n", ("t",))
    assert fitted[0] == {"t": "short"}
    assert all(r["t"].endswith("…") for r in fitted[1:])
    assert sum(count_tokens(f"- {r['t']}\n") for r in fitted) <= 100
