"""`read_json_with_fallback` and `set_aside` (breaker F12: corrupt state handled once, clearly).

- a corrupt file restored from `.bak` is written back, so it is copied aside ONCE and the
  next read is clean;
- without a usable backup the default is used, ONE warning says so, and however many
  times the file is read it is copied aside only once (and left in place, never
  overwritten blindly);
- `set_aside` never makes a second copy of identical bytes, and never overwrites a copy.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ctxagent.storage.files import read_json_with_fallback, set_aside, write_json_with_backup

DAMAGE = [b"", b"{", b"\x00" * 10, b"\xff\xfe garbage", b'{"items": 1']


def read(path: Path, validate=None) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = read_json_with_fallback(path, dict, validate=validate)
    return value, [str(w.message) for w in caught]


def asides(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".corrupt-*"))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "todos.json"
    write_json_with_backup(path, {"items": ["a"]})
    write_json_with_backup(path, {"items": ["a", "b"]})  # .bak holds ["a"]
    return path


@pytest.mark.parametrize("damage", DAMAGE)
def test_F12_backup_restores_and_is_written_back_so_the_corruption_is_handled_once(store: Path, damage: bytes) -> None:
    store.write_bytes(damage)
    value, messages = read(store)
    assert value == {"items": ["a"]}
    assert len(messages) == 1 and "unreadable" in messages[0] and "restored from todos.json.bak" in messages[0]
    assert json.loads(store.read_text()) == {"items": ["a"]}  # written back
    [aside] = asides(store)
    assert aside.read_bytes() == damage and aside.name in messages[0]
    for _ in range(3):
        assert read(store) == ({"items": ["a"]}, [])
    assert asides(store) == [aside]


@pytest.mark.parametrize("damage", DAMAGE)
def test_F12_without_a_backup_one_clear_warning_and_one_copy_however_often_it_is_read(tmp_path: Path,
                                                                                     damage: bytes) -> None:
    path = tmp_path / "todos.json"
    path.write_bytes(damage)
    for _ in range(4):
        value, messages = read(path)
        assert value == {}
        assert len(messages) == 1 and "no usable backup" in messages[0] and "reads as empty" in messages[0]
    assert len(asides(path)) == 1 and asides(path)[0].read_bytes() == damage
    assert path.read_bytes() == damage  # left in place: never overwritten blindly


def test_F12_both_file_and_backup_corrupt_give_one_warning_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "todos.json"
    path.write_bytes(b"{")
    (tmp_path / "todos.json.bak").write_bytes(b"[")
    for _ in range(2):
        value, messages = read(path)
        assert value == {} and len(messages) == 1
        assert "todos.json is unreadable" in messages[0] and "todos.json.bak is unreadable" in messages[0]
    assert len(asides(path)) == 1 and len(asides(tmp_path / "todos.json.bak")) == 1


def test_F12_a_value_refused_by_validate_counts_as_corrupt(store: Path) -> None:
    def validate(value: object) -> object:
        if len(value["items"]) > 1:
            raise ValueError("two items")
        return value

    value, messages = read(store, validate)
    assert value == {"items": ["a"]} and "two items" in messages[0]
    assert json.loads(store.read_text()) == {"items": ["a"]}


def test_F12_a_file_changed_by_another_writer_meanwhile_is_not_overwritten(store: Path) -> None:
    store.write_bytes(b"{")

    def validate(value: object) -> object:  # runs on the .bak, after the main file was read
        store.write_text('{"items": ["new"]}')
        return value

    read(store, validate)
    assert json.loads(store.read_text()) == {"items": ["new"]}


def test_F12_a_changed_corrupt_file_gets_a_new_copy(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"{1")
    read(path)
    path.write_bytes(b"{2")
    read(path)
    assert sorted(p.read_bytes() for p in asides(path)) == [b"{1", b"{2"]


def test_set_aside_never_overwrites_an_existing_copy(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    copies = []
    for n in range(5):  # within one millisecond the stamps collide: names must not
        path.write_bytes(bytes([n]))
        copies.append(set_aside(path))
    assert len(set(copies)) == 5 and [c.read_bytes() for c in copies] == [bytes([n]) for n in range(5)]
    assert set_aside(path) == copies[-1]
