"""The compiled chunk scanner (ctxagent.context._chunkscan): the same entries as the
pure-Python path, its bounds, its errors, and its behaviour when called again while busy.
(The scores it leads to are checked on both paths by test_textstats*.py.)"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.context import textstats
from ctxagent.context.terms import chunks, terms

_chunkscan = textstats._chunkscan
needs_scanner = pytest.mark.skipif(_chunkscan is None, reason="the compiled scanner is not built here")

_WORDS = ["parse_cfg", "ContextBuilder", "内存优化", "config973", "it's", "v3.11.7", "café", "🚀", "\ud800", "a" * 40, "x"]
_text = st.one_of(st.text(max_size=80), st.lists(st.sampled_from(_WORDS + [" ", ",", "\n", "-"]), max_size=30).map("".join))


def test_the_compiled_scanner_is_built_in_ci() -> None:
    """CI installs with a C compiler: a silent build failure would leave the fast path untested."""
    if os.environ.get("CI"):
        assert textstats.compiled_available(), "ctxagent.context._chunkscan was not built (see setup.py)"


def _python_entries(texts: list[str], key: tuple[str, ...]) -> list[tuple[int, int, int, dict[str, int]]]:
    """(n_terms, pieces, value100, found as a dict) of each text, by the pure-Python path."""
    textstats.use_compiled(False)
    try:
        entries = textstats._learn_python(texts, key)
    finally:
        textstats.use_compiled(True)
    return [(n_terms, pieces, value100, dict(found)) for n_terms, pieces, value100, _, found in map(entries.get, texts)]


@needs_scanner
@settings(max_examples=200, deadline=None)
@given(st.lists(_text, max_size=8), _text, st.integers(1, 6))
def test_scan_gives_the_pure_python_entries(texts: list[str], query: str, capacity: int) -> None:
    key = tuple(dict.fromkeys(terms(query)))
    scanner = _chunkscan.Scanner(textstats.chunk_figures)
    expected = _python_entries(texts, key)
    for _ in range(2):  # first sighting, then from the table (or after evictions, with a small capacity)
        got = scanner.scan(texts, {term: i for i, term in enumerate(key)}, capacity, key)
        assert [(n, p, v, dict(found)) for n, p, v, tag, found in got] == expected and all(g[3] is key for g in got)
        assert len(scanner) <= capacity
        for (_, _, _, _, found), text in zip(got, texts):  # query terms in order of first appearance
            assert [term for term, _ in found] == [t for t in dict.fromkeys(terms(text)) if t in key]


@needs_scanner
def test_a_new_query_recounts_the_held_terms_without_new_chunk_calls() -> None:
    calls: list[bytes] = []

    def figures(chunk: bytes):
        calls.append(chunk)
        return textstats.chunk_figures(chunk)

    scanner = _chunkscan.Scanner(figures)
    texts = ["parse_cfg reads the config", "config config budget", "内存优化 budget"]
    first = scanner.scan(texts, {"config": 0}, 100)
    assert [dict(r[4]) for r in first] == [{"config": 1}, {"config": 2}, {}]
    learnt = len(calls)
    assert learnt == len({c for t in texts for c in chunks(t)})
    second = scanner.scan(texts, {"budget": 0, "内存": 1, "parse": 2}, 100)
    assert [dict(r[4]) for r in second] == [{"parse": 1}, {"budget": 1}, {"内存": 1, "budget": 1}]
    assert len(calls) == learnt  # every chunk came from the table


@needs_scanner
def test_capacity_evicts_the_older_half() -> None:
    scanner = _chunkscan.Scanner(textstats.chunk_figures)
    scanner.scan([" ".join(f"w{i}" for i in range(10))], {}, 10)
    assert len(scanner) == 10
    scanner.scan(["fresh"], {}, 10)  # full: keep the 5 newest, then add one
    assert len(scanner) == 6
    scanner.clear()
    assert len(scanner) == 0


@needs_scanner
def test_an_error_in_figures_propagates_and_leaves_the_scanner_usable() -> None:
    def figures(chunk: bytes):
        if chunk == b"boom":
            raise RuntimeError("figures failed")
        return textstats.chunk_figures(chunk)

    scanner = _chunkscan.Scanner(figures)
    with pytest.raises(RuntimeError, match="figures failed"):
        scanner.scan(["fine words", "then boom here"], {"word": 0}, 100)
    assert scanner.scan(["fine words"], {"word": 0}, 100) == [(2, 2, 216, None, (("word", 1),))]
    assert scanner.scan(["fine", "here"], {}, 100)[1][0] == 1  # learnt before the error: kept; `here` learnt now


@needs_scanner
@pytest.mark.parametrize("bad", [None, (), ("terms", 1, 2), ((), "1", 2, 3), [(), 1, 2, 3], ((), 1, 2, 1 << 70)])
def test_figures_of_the_wrong_shape_is_a_clear_error(bad) -> None:
    scanner = _chunkscan.Scanner(lambda chunk: bad)
    with pytest.raises((TypeError, OverflowError)):
        scanner.scan(["word"], {}, 100)
    assert len(scanner) == 0


@needs_scanner
def test_bad_arguments_are_clear_errors() -> None:
    scanner = _chunkscan.Scanner(textstats.chunk_figures)
    with pytest.raises(TypeError, match="must be str"):
        scanner.scan(["ok", b"bytes"], {}, 100)
    with pytest.raises(ValueError, match="distinct index"):
        scanner.scan(["ok"], {"a": 0, "b": 0}, 100)
    with pytest.raises(ValueError, match="distinct index"):
        scanner.scan(["ok"], {"a": 5}, 100)
    with pytest.raises(TypeError):
        scanner.scan(["ok"], ["a"], 100)
    with pytest.raises(TypeError):
        _chunkscan.Scanner("not callable")
    assert scanner.scan(["ok"], {"ok": 0}, 100) == [(1, 1, 48, None, (("ok", 1),))]  # still usable


@needs_scanner
def test_a_call_while_busy_returns_none_and_analyse_falls_back() -> None:
    """A call made while the scanner runs (from inside `figures`, as another thread can
    while `figures` runs Python code) gets None; `analyse` then takes the pure-Python path."""
    inner: list = []
    scanner = _chunkscan.Scanner(lambda chunk: (inner.append(scanner.scan(["x"], {}, 10)), textstats.chunk_figures(chunk))[1])
    assert scanner.scan(["hello"], {}, 10)[0][0] == 1
    assert inner == [None]


@needs_scanner
def test_clear_while_busy_is_refused() -> None:
    scanner = _chunkscan.Scanner(lambda chunk: scanner.clear())
    with pytest.raises(RuntimeError, match="busy"):
        scanner.scan(["x"], {}, 10)
    assert len(scanner) == 0


@needs_scanner
def test_analyse_in_another_thread_while_figures_runs_gets_the_reference() -> None:
    if not textstats.compiled_in_use():
        pytest.skip("the compiled path is not in use")
    started, release = threading.Event(), threading.Event()
    original = textstats._SCANNER
    results: dict[str, object] = {}

    def slow_figures(chunk: bytes):
        if chunk == b"slowchunk":
            started.set()
            release.wait(10)
        return textstats.chunk_figures(chunk)

    textstats._SCANNER = _chunkscan.Scanner(slow_figures)
    try:
        worker = threading.Thread(target=lambda: results.setdefault("a", textstats.analyse(["slowchunk here"], ["here"])))
        worker.start()
        assert started.wait(10)
        results["b"] = textstats.analyse(["other text here"], ["here"])  # scanner busy: the pure-Python path
        release.set()
        worker.join(10)
    finally:
        textstats._SCANNER = original
    assert results["a"][1][0].length == 2 and results["a"][0][0] > 0
    assert results["b"][1][0].length == 3 and results["b"][0][0] > 0


def test_pure_python_is_chosen_by_the_environment() -> None:
    code = "from ctxagent.context import textstats; print(textstats.compiled_in_use())"
    env = {**os.environ, "CTXAGENT_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    for value in ("true", " ON ", "yes"):
        env["CTXAGENT_PURE_PYTHON"] = value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        assert out.strip() == "False", value
    for value in ("0", "false", "off", "no", ""):
        env["CTXAGENT_PURE_PYTHON"] = value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        assert out.strip() == str(textstats.compiled_available()), value


# --- hostile use of the scanner itself: none of these may crash the process or leak ------------
def _in_a_fresh_process(code: str) -> str:
    """Runs `code` in a new interpreter with the debug allocator (freed memory is overwritten,
    so a use after free crashes there, not this test run); returns its output."""
    env = {**os.environ, "PYTHONMALLOC": "debug", "CTXAGENT_PURE_PYTHON": "0"}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@needs_scanner
def test_a_scanner_whose_init_was_not_called_raises() -> None:
    out = _in_a_fresh_process("""
        from ctxagent.context import textstats
        scanner = textstats._chunkscan.Scanner.__new__(textstats._chunkscan.Scanner)
        try:
            scanner.scan(["some text"], {}, 10)
        except RuntimeError as exc:
            print(exc)
    """)
    assert "__init__ was not called" in out


@needs_scanner
def test_a_scan_from_a_destructor_run_by_clear_gets_none() -> None:
    """clear() releases the chunks' terms, which can run a __del__ that scans: that scan must
    not see the half-released table (the long chunk's key is already gone)."""
    out = _in_a_fresh_process("""
        from ctxagent.context import textstats
        long_chunk = "a" * 30
        class Term(str):
            def __del__(self):
                print("inner:", scanner.scan([long_chunk], {}, 100))
        def figures(chunk):
            found, n_terms, pieces, value100 = textstats.chunk_figures(chunk)
            return tuple(map(Term, found)), n_terms, pieces, value100
        scanner = textstats._chunkscan.Scanner(figures)
        scanner.scan([long_chunk + " " + "b" * 30 + " ccc"], {}, 100)
        scanner.clear()
        print("held:", len(scanner), scanner.scan([long_chunk], {}, 100)[0][:3])
    """)
    assert "inner: None" in out and "held: 0 (1, 1, 719)" in out


@needs_scanner
def test_a_scan_while_another_threads_iterable_is_read_does_not_run_alongside_it() -> None:
    """Reading `texts` (here a generator) can run Python code and so let another thread in:
    whichever call starts scanning second must get None, not run on the same table (with a
    query of another size it wrote past its own count array)."""
    out = _in_a_fresh_process("""
        import threading
        from ctxagent.context import textstats
        in_figures, generator_go, figures_go = threading.Event(), threading.Event(), threading.Event()
        def figures(chunk):
            if chunk == b"block":
                in_figures.set()
                figures_go.wait(30)
            return textstats.chunk_figures(chunk)
        scanner = textstats._chunkscan.Scanner(figures)
        big = {f"w{i}": i for i in range(100)}
        text = " ".join(big)
        results = {}
        def texts():
            generator_go.wait(30)
            yield text
        first = threading.Thread(target=lambda: results.setdefault("first", scanner.scan(texts(), big, 1000)))
        second = threading.Thread(target=lambda: results.setdefault("second", scanner.scan(["block " + text], {"w99": 0}, 1000)))
        first.start()  # blocked in its generator, before it reads the busy flag
        second.start()
        assert in_figures.wait(30)  # the second call is scanning, inside figures
        generator_go.set()
        first.join(30)
        figures_go.set()
        second.join(30)
        print(results["first"], results["second"][0][4])
    """)
    assert out.split() == ["None", "(('w99',", "1),)"]


@needs_scanner
def test_figures_replaced_by_init_while_it_runs_stays_alive_until_it_returns() -> None:
    out = _in_a_fresh_process("""
        import functools, gc
        from ctxagent.context import textstats
        scanner = textstats._chunkscan.Scanner(textstats.chunk_figures)
        def figures(chunk):
            scanner.__init__(textstats.chunk_figures)  # drops the scanner's reference to the lru_cache wrapper now running
            gc.collect()
            return textstats.chunk_figures(chunk)
        scanner.__init__(functools.lru_cache(maxsize=None)(figures))
        print(scanner.scan(["hello world"], {}, 10))
    """)
    assert out.strip() == "[(2, 2, 240, None, ())]"


@needs_scanner
def test_a_memory_error_in_mid_scan_leaves_the_table_consistent() -> None:
    """One allocation made to fail at each point of a scan that evicts (CPython's
    _testcapi.set_nomemory): afterwards every chunk held is still found (figures is not asked
    again) and the figures are right. An eviction that failed half-way left the slots naming
    entries that had moved."""
    out = _in_a_fresh_process("""
        try:
            import _testcapi
            _testcapi.set_nomemory
        except (ImportError, AttributeError):
            print("skip"); raise SystemExit
        from ctxagent.context import textstats
        calls = []
        def figures(chunk):
            calls.append(chunk)
            return ((chunk.decode(),), 1, len(chunk), 0)
        words = [f"longword_number_{i:02d}_xxxxxx" for i in range(12)]
        failed = 0
        for start in range(80):
            scanner = textstats._chunkscan.Scanner(figures)
            scanner.scan([" ".join(words[:8])], {}, 8)
            _testcapi.set_nomemory(start, start + 1)
            try:
                scanner.scan([words[8]], {}, 8)  # full: evicts the 4 oldest, then learns words[8]
            except MemoryError:
                failed += 1
            finally:
                _testcapi.remove_mem_hooks()
            scanner.scan([words[9]], {}, 8)
            del calls[:]
            got = scanner.scan([" ".join(words[4:8])], {}, 8)  # held whatever failed
            assert calls == [] and got == [(4, 100, 0, None, ())], (start, calls, got)
        print("failed", failed)
    """)
    assert out.startswith(("skip", "failed"))


@needs_scanner
def test_a_scanner_in_a_reference_cycle_is_collected() -> None:
    """`figures` (and the terms it returns) may refer back to the scanner, as a closure does:
    the garbage collector must be able to free the cycle and the table with it."""
    class Term(str):
        pass

    def make() -> weakref.ref:
        term = Term("word")
        scanner = _chunkscan.Scanner(lambda chunk: ((term,), 1, 1, 1) if scanner is not None else None)
        assert scanner.scan(["word"], {"word": 0}, 10)[0][4] == (("word", 1),)
        return weakref.ref(term)

    alive = make()
    gc.collect()
    assert alive() is None


def _python_sketch(text: str, k: int) -> frozenset[int]:
    from ctxagent.context.select import sketch

    textstats.use_compiled(False)
    try:
        return sketch.__wrapped__(text)
    finally:
        textstats.use_compiled(True)


@needs_scanner
@settings(max_examples=200, deadline=None)
@given(_text, st.integers(1, 6))
def test_sketch_equals_the_python_definition(text: str, capacity: int) -> None:
    from ctxagent.context.select import SKETCH_K

    scanner = _chunkscan.Scanner(textstats.chunk_figures)
    try:
        expected = _python_sketch(text, SKETCH_K)
    except UnicodeEncodeError:  # a lone surrogate inside a term: both paths refuse it
        with pytest.raises(UnicodeEncodeError):
            scanner.sketch(text, SKETCH_K, capacity)
        return
    for _ in range(2):
        assert scanner.sketch(text, SKETCH_K, capacity) == expected
        assert len(scanner) <= capacity


@needs_scanner
@pytest.mark.parametrize("text", ["", "the of", "one", "parse_cfg", "内存优化 budget", " ".join(f"w{i}" for i in range(200))])
def test_sketch_edge_cases(text: str) -> None:
    from ctxagent.context.select import SKETCH_K

    scanner = _chunkscan.Scanner(textstats.chunk_figures)
    got = scanner.sketch(text, SKETCH_K, 1000)
    assert got == _python_sketch(text, SKETCH_K)
    assert len(got) <= SKETCH_K and all(0 <= h < 2**32 for h in got)


@needs_scanner
def test_sketch_while_busy_returns_none() -> None:
    inner: list = []
    scanner = _chunkscan.Scanner(lambda chunk: (inner.append(scanner.sketch("x y", 32, 10)), textstats.chunk_figures(chunk))[1])
    assert scanner.scan(["hello"], {}, 10)[0][0] == 1
    assert inner == [None]
    with pytest.raises(TypeError):
        scanner.sketch(b"bytes", 32, 10)
