"""Adversarial checks of the textstats rewrite (83be8ab), the word-then-number fast path of
`terms` (f23f85f) and the garbage collector pause of `ContextBuilder` (f9f3fc0, e0fd445).

References (never the code under test's own caches):
- scores: `scoring.query_scores(q, [terms(t) for t in texts], normalize=False)`, compared
  bit for bit (`float.hex`), and the same over `_ref_terms`, a from-scratch copy of the
  original one-regex-pass definition of `terms` (commit 32028e6, no chunks, no caches);
- lengths: `len(terms(t))` and `len(_ref_terms(t))`;
- `pieces` <= `exact_tokens(t, "o200k_base")` and `exact_tokens(t, "cl100k_base")`;
- `value` <= `estimate_value(t)` + 1e-9.
"""

from __future__ import annotations

import dis
import gc
import random
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket
from ctxagent.context.messages import MessageError
from ctxagent.errors import ContextOverflowError
from ctxagent.text import statistics as textstats
from ctxagent.text.scoring import query_scores
from ctxagent.text.statistics import analyse, text_facts
from ctxagent.text.terms import STOP_WORDS, evict_oldest, stem, terms
from ctxagent.text.tokens import estimate_value, exact_tokens

# --- the reference definition of terms(): one regex pass over the whole text (32028e6) ---
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_REF_TOKEN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)*")
_REF_CJK_RE = re.compile(rf"[{_CJK}]")
_REF_SPLIT_RE = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])")


def _ref_word_terms(word: str) -> list[str]:
    lower = word.lower()
    parts = [p.lower() for p in _REF_SPLIT_RE.split(word) if p]
    out = []
    if len(parts) > 1:
        out.append(lower)
        out.extend(stem.__wrapped__(p) for p in parts if p not in STOP_WORDS)
    elif lower not in STOP_WORDS:
        out.append(stem.__wrapped__(lower))
    return out


def _ref_terms(text: str) -> list[str]:
    out: list[str] = []
    for match in _REF_TOKEN_RE.finditer(text):
        token = match.group()
        if _REF_CJK_RE.match(token):
            out.extend(token)
            out.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            out.extend(_ref_word_terms(token))
    return out




def _bits(values: list[float]) -> list[str]:
    return [v.hex() for v in values]


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the tokenizer cannot take them
        return False
    return True


def check(texts, query, *, exact: bool = True) -> None:
    """analyse(texts, query) against every reference, twice (first sighting, then cached)."""
    texts = list(texts)
    expected = _bits(query_scores(query, [terms(t) for t in texts], normalize=False))
    assert _bits(query_scores(query, [_ref_terms(t) for t in texts], normalize=False)) == expected
    lengths = [len(_ref_terms(t)) for t in texts]
    assert [len(terms(t)) for t in texts] == lengths
    for _ in range(2):
        raw, facts = analyse(texts, query)
        assert _bits(raw) == expected, (texts, query)
        assert [f.length for f in facts] == lengths, (texts, query)
        for text, fact in zip(texts, facts):
            assert fact.value <= estimate_value(text) + 1e-9, (text, fact)
            assert fact.pieces >= 0 and fact.value >= 0
            assert text_facts(text) == fact
            if exact and _encodable(text):
                assert fact.pieces <= exact_tokens(text, "o200k_base"), (text, fact)
                assert fact.pieces <= exact_tokens(text, "cl100k_base"), (text, fact)


# --- strategies ---------------------------------------------------------------------------
_PIECES = [
    "parser123", "Parser123", "utf8", "the123", "If2", "THE123", "a1", "A1", "I2", "i18n", "x86_64", "HTTPServer2",
    "getX1", "ABCdef12", "aB1", "Ab1", "_1", "__init__", "_", "__", "v3.11.7", "a..b", "1..2", "3.", ".5", "1.2.3.4.",
    "it's", "don't", "'s", "'LL", "''", "O'Reilly", "ContextBuilder", "parse_cfg", "load_settings2", "retried",
    "stopped", "classes", "the", "The", "THE", "of", "if", "import", "return", "none", "Self", "内存优化", "优化",
    "キャッシュ", "캐시", "如何优化Pandas的内存占用", "Pandas内存", "é", "e\u0301", "café", "naïve", "Ａｂｃ１２３",
    "ｐａｒｓｅｒ", "１２３", "²", "٣", "五", "ǅ", "ʰ", "🚀", "👩\u200d💻", "\u00a0", "\u3000", "\x00", "\ufeff",
    "\u200b", "—", "ß", "İ", "ﬁ", "Ω", "x²", "1e10", "0x1F", "007", "9" * 40, "a" * 60 + "7" * 40, "Ab" + "c" * 50 + "9",
]
_SEPS = [" ", "", "\n", "\r\n", "\r", "\t", ",", "-", "/", "(", ")", "  ", ";", "\x00", "\x1f", "\x7f", "\u3000", "\u00a0", "'", ".", "_"]
_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\ude00\ud83d", "a\ud800b"]

_identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True)
_word_then_number = st.builds(
    lambda word, number, upper: (word.capitalize() if upper else word) + number,
    st.one_of(st.sampled_from(sorted(STOP_WORDS)), st.from_regex(r"[a-z]{1,14}", fullmatch=True)),
    st.from_regex(r"[0-9]{1,25}", fullmatch=True),
    st.booleans(),
)
_piece = st.one_of(
    st.sampled_from(_PIECES),
    _identifier,
    _word_then_number,
    st.text(max_size=8),
    st.text(st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=8),
    st.sampled_from(_SURROGATES),
    st.characters(categories=["Cs"]),
    st.characters(categories=["Mn", "Mc", "Me", "Nd", "Nl", "No", "Lm", "Lo", "Lt"]),
)
text_st = st.lists(st.tuples(_piece, st.sampled_from(_SEPS)), max_size=24).map(lambda l: "".join(p + s for p, s in l))


@st.composite
def corpus_and_query(draw):
    texts = draw(st.lists(text_st, max_size=7))
    if texts and draw(st.booleans()):  # the same text several times in one call
        texts += draw(st.lists(st.sampled_from(texts), min_size=1, max_size=6))
        texts = draw(st.permutations(texts))
    pool = sorted({t for text in texts for t in _ref_terms(text)}) or ["parser"]
    extra = ["", "the", "of", "The", "Parser", "parse_cfg", "123", "内", "内存", "nothing_here", "\ud800"]
    query = draw(st.one_of(
        st.lists(st.sampled_from(pool), max_size=6),  # terms the texts hold, repeats allowed
        st.lists(st.sampled_from(pool + extra), max_size=8),
        st.just([]),
        st.lists(st.sampled_from(sorted(STOP_WORDS)), max_size=4),  # only stop words (never terms)
        text_st.map(terms),
    ))
    return texts, query


# --- analyse against the references ---------------------------------------------------------
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpus_and_query())
def test_analyse_equals_references_on_adversarial_text(case) -> None:
    texts, query = case
    check(texts, query)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=80) | st.lists(_piece, max_size=12).map("".join))
def test_terms_fast_paths_equal_the_one_pass_definition(text: str) -> None:
    assert terms(text) == _ref_terms(text)


@settings(max_examples=300, deadline=None)
@given(_word_then_number | _identifier)
def test_word_then_number_identifiers_equal_the_definition(word: str) -> None:
    for text in (word, word.upper(), word.swapcase(), f"{word} {word}", f"x.{word}.y"):
        assert terms(text) == _ref_terms(text)


@pytest.mark.parametrize("word", ["the123", "If2", "THE123", "a1", "A1", "I2", "In0", "Is00", "it9", "Then12345678901234567890",
                                  "parser123", "Parser0", "parsers123", "retried2", "stopped7", "class9", "self1"])
def test_stop_words_and_words_with_digits(word: str) -> None:
    assert terms(word) == _ref_terms(word)
    check([word, f"{word} {word.lower()} {word.upper()}", "nothing"], _ref_terms(word) + ["123"])


def test_repeated_query_terms_reuse_the_cached_counts_with_the_new_weights() -> None:
    texts = ["parser parser config", "config budget", "parser123 parser", "nothing at all", "parser"]
    for query in (["parser"], ["parser", "parser"], ["parser", "parser", "parser", "config"], ["config", "parser"],
                  ["parser", "config", "parser"], ["parser"], [], ["the", "of"], ["parser", "parser"]):
        check(texts, query)


def test_a_query_of_every_term_of_the_corpus_with_repeats() -> None:
    rng = random.Random(9)
    texts = [" ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 20))) for _ in range(80)]
    every = [t for text in texts for t in _ref_terms(text)]
    check(texts, every, exact=False)  # hundreds of query terms, most repeated many times
    check(texts, sorted(set(every)), exact=False)  # the same terms once each, in another order
    check(texts, every[::-1] + ["never", "seen", "there"], exact=False)


def test_empty_inputs() -> None:
    assert analyse([], []) == ([], [])
    assert analyse([], ["parser"]) == ([], [])
    check(["", "", " \n\r\t", "\x00"], ["parser"])
    check(["", "parser"], [])
    check(("tuple", "of texts", "tuple"), ["tuple"])  # any Sequence


def test_the_same_text_many_times_in_one_call() -> None:
    rng = random.Random(3)
    base = [" ".join(rng.choice(_PIECES[:60]) for _ in range(rng.randint(0, 30))) for _ in range(15)]
    texts = [rng.choice(base) for _ in range(600)]
    query = _ref_terms(base[0])[:4] + _ref_terms(base[1])[:2]
    check(texts, query, exact=False)
    check([base[2]] * 500, query, exact=False)
    check([base[2]] * 500 + ["fresh text never seen parser123"], query, exact=False)


def test_alternating_queries_and_text_sets_across_calls() -> None:
    rng = random.Random(11)
    sets = [[" ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 25))) for _ in range(40)] for _ in range(3)]
    sets.append(sets[0][:10] + sets[1][:10])  # shared texts across sets
    queries = [_ref_terms(sets[i][0])[:3] + _ref_terms(sets[i][1])[:2] for i in range(3)] + [[], ["parser"] * 3]
    for round_ in range(3):
        for qi, query in enumerate(queries):
            for si in ((qi + round_) % len(sets), qi % len(sets)):
                texts = sets[si]
                expected = _bits(query_scores(query, [_ref_terms(t) for t in texts], normalize=False))
                raw, facts = analyse(texts, query)
                assert _bits(raw) == expected, (round_, qi, si)
                assert [f.length for f in facts] == [len(_ref_terms(t)) for t in texts]
                assert [text_facts(t) for t in texts] == facts


@pytest.mark.parametrize("chunks_max,texts_max", [(1, 0), (1, 1), (2, 1), (3, 2), (5, 3)])
def test_tiny_caches_evict_in_mid_call(monkeypatch, chunks_max: int, texts_max: int) -> None:
    monkeypatch.setattr(textstats, "CHUNKS_MAX", chunks_max)
    monkeypatch.setattr(textstats, "TEXTS_MAX", texts_max)
    rng = random.Random(chunks_max * 10 + texts_max)
    texts = [" ".join(rng.choice(_PIECES) + str(rng.randint(0, 30)) * rng.randint(0, 1) for _ in range(rng.randint(0, 12)))
             for _ in range(40)]
    texts += texts[:15]
    queries = [_ref_terms(texts[0])[:3], _ref_terms(texts[1])[:2] * 2, [], _ref_terms(texts[0])[:3]]
    for query in queries * 2:
        check(texts, query, exact=False)
    assert len(textstats._TEXTS) <= max(texts_max, 1) and textstats.chunks_held() <= chunks_max


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpus_and_query(), st.integers(1, 4), st.integers(0, 3))
def test_tiny_caches_on_adversarial_text(case, chunks_max: int, texts_max: int) -> None:
    texts, query = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(textstats, "CHUNKS_MAX", chunks_max)
        mp.setattr(textstats, "TEXTS_MAX", texts_max)
        check(texts, query, exact=False)
        check(list(reversed(texts)), list(reversed(query)), exact=False)


# --- threads ----------------------------------------------------------------------------------
def _thread_workload(seed: int):
    rng = random.Random(seed)
    salt = f"t{seed}x"
    shared = [" ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 15))) for _ in range(30)]
    mine = [f"{salt}{i} " + " ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 15))) for i in range(30)]
    texts = shared + mine + shared[:5]
    rng.shuffle(texts)
    q1 = _ref_terms(texts[0])[:2] + [f"{salt}{seed % 7}"] + _ref_terms(texts[3])[:2]
    q2 = _ref_terms(texts[5])[:3] * 2
    return [(texts, q, _bits(query_scores(q, [_ref_terms(t) for t in texts], normalize=False)),
             [len(_ref_terms(t)) for t in texts]) for q in (q1, q2, [])]


def _run_threads(workloads, rounds: int) -> int:
    """Run the workloads in threads, switching as often as possible; every call must
    return and its results equal the reference. Returns the number of calls checked."""
    def work(cases):
        checked = 0
        for _ in range(rounds):
            for texts, query, expected, lengths in cases:
                raw, facts = analyse(texts, query)
                shown = [text_facts(t) for t in texts[:5]]
                assert _bits(raw) == expected
                assert [f.length for f in facts] == lengths
                assert shown == facts[:5]
                checked += 1
        return checked

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        with ThreadPoolExecutor(max_workers=len(workloads)) as pool:
            return sum(f.result() for f in [pool.submit(work, w) for w in workloads])
    finally:
        sys.setswitchinterval(interval)


def test_threads_with_different_queries_get_the_reference_scores() -> None:
    assert _run_threads([_thread_workload(100 + i) for i in range(6)], rounds=6) > 0


@pytest.mark.parametrize("chunks_max,texts_max", [(3, 2), (17, 5)])
def test_threads_with_tiny_caches_get_the_reference_scores(monkeypatch, chunks_max: int, texts_max: int) -> None:
    """Eviction in mid-call from several threads: every call returns, and every result
    equals the reference."""
    monkeypatch.setattr(textstats, "CHUNKS_MAX", chunks_max)
    monkeypatch.setattr(textstats, "TEXTS_MAX", texts_max)
    assert _run_threads([_thread_workload(200 + chunks_max + i) for i in range(5)], rounds=4) > 0


def _pause_before_the_eviction_loop(cache: dict, paused: threading.Event, resume: threading.Event):
    """A tracer for one thread that stops it inside `evict_oldest(cache, ...)` at the last
    call before its loop over the keys (where an iterator over `cache` made earlier would
    still be alive, and where the interpreter may switch threads anyway). Only the
    schedule is forced: no code is replaced."""
    code = evict_oldest.__code__
    instructions = list(dis.get_instructions(code))
    get_iter = next(i for i, ins in enumerate(instructions) if ins.opname == "GET_ITER")
    list_call = next(ins.offset for ins in reversed(instructions[:get_iter]) if ins.opname.startswith("CALL"))  # 3.10: CALL_FUNCTION

    def local(frame, event, arg):
        if event == "opcode" and frame.f_lasti == list_call and not paused.is_set():
            paused.set()
            resume.wait(10)
        return local

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is code and frame.f_locals.get("cache") is cache:
            frame.f_trace_opcodes = True
            return local
        return None

    return tracer


def test_eviction_while_another_thread_inserts_does_not_crash_analyse(monkeypatch) -> None:
    """Thread A is held inside `evict_oldest` just before it lists the cache's keys (where
    the interpreter may switch threads anyway); thread B inserts a chunk meanwhile. A
    must still return the reference scores (it raised RuntimeError when the keys were
    listed through an iterator made one call earlier)."""
    monkeypatch.setattr(textstats, "CHUNKS_MAX", 4)
    analyse(["warm1 warm2 warm3 warm4 warm5"], ["warm1"])  # _FIGURES holds >= CHUNKS_MAX chunks
    paused, resume = threading.Event(), threading.Event()
    outcome: list = []

    def thread_a():
        sys.settrace(_pause_before_the_eviction_loop(textstats._FIGURES, paused, resume))
        try:
            outcome.append(analyse(["racea1 racea2"], ["racea1"]))
        except BaseException as exc:
            outcome.append(exc)
        finally:
            sys.settrace(None)
            paused.set()

    a = threading.Thread(target=thread_a)
    a.start()
    try:
        assert paused.wait(10)
        # thread B (this one), an ordinary call with a chunk never seen before
        assert analyse(["raceb1"], ["raceb1"])[0] == query_scores(["raceb1"], [terms("raceb1")], normalize=False)
    finally:
        resume.set()
        a.join(10)
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    assert result[0] == query_scores(["racea1"], [terms("racea1 racea2")], normalize=False)


# --- a text of 1-2 MB -------------------------------------------------------------------------
def test_a_text_of_one_and_a_half_megabytes() -> None:
    rng = random.Random(5)
    words = [p for p in _PIECES if _encodable(p)]
    parts = [rng.choice(words) + rng.choice(["", str(rng.randint(0, 10**9))]) for _ in range(60_000)]
    big = (rng.choice(_SEPS[:8]).join(parts) + " " + "内存优化存" * 40_000 + " " + "y" * 100_000 + "9" * 100_000 + " "
           + "7" * 60_000 + " " + "v1." * 20_000)
    assert 1_000_000 <= len(big.encode("utf-8")) <= 2_100_000
    query = ["parser", "内存", "存", "the123", "123", "7" * 60_000, "y" * 100_000 + "9" * 100_000, "内"]
    texts = [big, big[: len(big) // 2], big[len(big) // 2 :], "parser", big]
    check(texts, query)
    check(texts, query[:3])


# --- the garbage collector pause ------------------------------------------------------------
NOW = 1_700_000_000.0


def _builder(max_tokens: int = 4000, clock=lambda: NOW) -> ContextBuilder:
    return ContextBuilder(config=ContextConfig(max_tokens=max_tokens), model="gpt-4o", clock=clock)


def _raise(exc):
    def clock():
        raise exc
    return clock


_FAILURES = {
    "overflow-build": (ContextOverflowError, lambda: _builder(200).build("x " * 2000, [], "You are helpful.")),
    "overflow-messages": (ContextOverflowError, lambda: _builder(200).build_messages("y " * 3000, [], "You are helpful.")),
    "empty-query": (ValueError, lambda: _builder().build("   ")),
    "no-user-message": (MessageError, lambda: _builder().build_messages(None, [{"role": "assistant", "content": "hi"}])),
    "bad-packet": (ValueError, lambda: _builder().build("q", custom_packets=[object()])),
    "clock-value-error": (ValueError, lambda: _builder(clock=_raise(ValueError("clock"))).build("q")),
    "clock-interrupt": (KeyboardInterrupt, lambda: _builder(clock=_raise(KeyboardInterrupt())).build_messages("q")),
}


@pytest.mark.parametrize("name", sorted(_FAILURES))
@pytest.mark.parametrize("was_enabled", [True, False])
def test_gc_state_is_restored_after_errors(name: str, was_enabled: bool) -> None:
    exc_type, call = _FAILURES[name]
    assert issubclass(MessageError, ValueError)
    gc.enable() if was_enabled else gc.disable()
    try:
        with pytest.raises(exc_type):
            call()
        assert gc.isenabled() is was_enabled
    finally:
        gc.enable()


@pytest.mark.parametrize("was_enabled", [True, False])
def test_gc_is_paused_during_a_build_and_restored_after_nested_builds(was_enabled: bool) -> None:
    seen = []

    def inner_clock():
        seen.append(("inner", gc.isenabled()))
        return NOW

    def outer_clock():
        seen.append(("outer", gc.isenabled()))
        _builder(clock=inner_clock).build("nested question about parser123")  # a build inside a build
        seen.append(("outer-after-inner", gc.isenabled()))
        return NOW

    packets = [ContextPacket(content=f"note {i} about parser{i}", metadata={"type": "note"}) for i in range(20)]
    gc.enable() if was_enabled else gc.disable()
    try:
        _builder(clock=outer_clock).build_messages("question about parser3", [], "sys", custom_packets=packets)
        assert gc.isenabled() is was_enabled
        assert seen == [("outer", False), ("inner", False), ("outer-after-inner", False)]
        _builder(clock=outer_clock).build("question about parser3", [], "sys", custom_packets=packets)
        assert gc.isenabled() is was_enabled
    finally:
        gc.enable()


def test_gc_stays_enabled_after_many_concurrent_builds() -> None:
    """Builds from several threads at once, each ends on its own schedule: once all are done,
    the collector the caller left on must be on."""
    assert gc.isenabled()

    def work(i: int) -> None:
        for j in range(6):
            _builder().build_messages(f"question {i} {j} about parser{i}", [], "sys",
                                      custom_packets=[ContextPacket(content=f"note {k} parser{k}", metadata={"type": "note"}) for k in range(5)])

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(work, range(4)))
    try:
        assert gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_builds_in_two_threads_restore_the_collector_once_both_are_over() -> None:
    """Deterministic overlap (only the thread schedule is forced): thread X is held inside
    its build while thread Y runs a whole build. When Y ends, X still runs, so the
    collector stays paused; when X ends, it is on again (both callers had it on)."""
    assert gc.isenabled()
    x_inside, y_done = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}
    errors: list[BaseException] = []

    def x_clock():
        x_inside.set()
        assert y_done.wait(10)
        return NOW

    def run_x():
        try:
            _builder(clock=x_clock).build("question x")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    x = threading.Thread(target=run_x)
    x.start()
    try:
        assert x_inside.wait(10)
        _builder().build("question y")  # Y, in this thread, from start to end while X runs
        seen["after y, x still inside"] = gc.isenabled()
    finally:
        y_done.set()
        x.join(30)
    seen["after both"] = gc.isenabled()
    gc.enable()
    assert not errors, errors
    assert seen == {"after y, x still inside": False, "after both": True}
