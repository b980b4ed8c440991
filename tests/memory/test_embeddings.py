"""Optional embedding search: off by default, blended in when a model is given.

The embedding model is the one thing faked here: a tiny deterministic "model" that maps
words to concept axes, standing in for a local sentence-transformers model.
"""

from __future__ import annotations

from pathlib import Path

from ctxagent.memory import MemoryStore
from ctxagent.memory.embeddings import cosine_top, detect_embedder, pack, unpack
from tests.support.extras import needs_local

needs_numpy = needs_local("numpy")  # vectors need numpy, which comes with the local extra

_CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "fruit": 1, "apple": 1, "banana": 1, "code": 2, "python": 2}


class ConceptModel:
    """A fake embedding model: one axis per concept, counting the words of each."""

    name = "fake-concepts"

    def encode(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0, 0.0, 0.0, 0.01]
            for word in text.lower().split():
                if word in _CONCEPTS:
                    vec[_CONCEPTS[word]] += 1.0
            out.append(vec)
        return out


def test_no_local_model_installed_means_full_text_only(tmp_path: Path) -> None:
    assert detect_embedder() is None  # the package is not a dependency
    assert MemoryStore(tmp_path / "m.db").embedder is None


@needs_numpy
def test_vectors_are_stored_with_the_memory_and_blend_into_search(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", embedder=ConceptModel())
    car = store.add("I bought an automobile", "episodic", 0.5)
    store.add("apple and banana salad", "episodic", 0.5)
    with store.read() as conn:
        assert conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 2
    hits = store.search("vehicle", min_importance=0.0)  # no shared word: only the vectors know
    assert hits and hits[0][0].id == car.id
    store.update(car.id, content="python code review")
    assert store.search("python", min_importance=0.0)[0][0].id == car.id
    store.remove(car.id)
    with store.read() as conn:
        assert conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 1


@needs_numpy
def test_pack_and_cosine_top() -> None:
    assert list(unpack(pack([1.0, 2.5]))) == [1.0, 2.5]
    rows = [(1, pack([1, 0])), (2, pack([0, 1])), (3, pack([1, 1]))]
    top = cosine_top([1, 0], rows, 2)
    assert list(top) == [1, 3] and abs(top[1] - 1.0) < 1e-6
    assert cosine_top([1, 0], [], 3) == {}


@needs_numpy
def test_vector_matches_of_an_excluded_session_stay_out(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", embedder=ConceptModel())
    store.add("I bought an automobile", "episodic", 0.5, metadata={"session_id": "s-now"})
    older = store.add("the car needs new tyres", "episodic", 0.5, metadata={"session_id": "s-before"})
    assert len(store.search("vehicle", min_importance=0.0)) == 2  # no shared word: only the vectors know
    assert [m.id for m, _ in store.search("vehicle", min_importance=0.0, exclude_session="s-now")] == [older.id]
