"""A snapshot record as written (version 2) and as read: its repeating parts stored once.

`pack` puts a call's messages and packet rows (as chains), its tools (as one value) and
those of its summary calls in the session's `ObjectStore` and leaves refs in their place,
every other field scrubbed inline; `unpack` gives back the record whole, as version 1 held
it. A record without refs (version 1) unpacks to itself. Reference: docs/context.md.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterable

from ctxagent.context.record.objects import OBJECTS_FILE, ObjectStore, read_objects, resolve
from ctxagent.redaction import redact as scrub

VERSION = 2
#: Fields of a request whose value is stored once: (name, as a chain of items).
_REQUEST_PARTS = (("messages", True), ("tools", False))

_read_lock = threading.Lock()
_read_cache: dict[str, tuple[tuple, dict]] = {}  # folder -> ((size, mtime_ns), objects)


def pack(record: dict, store: ObjectStore, secrets: Iterable[str] = ()) -> tuple[dict, bool]:
    """(the record to write, whether redaction replaced anything) for `record` (a snapshot
    with "request", and "report" / "summary_calls" when it has them)."""
    secrets = list(secrets)
    key = tuple(secrets)

    def clean(value: Any) -> Any:
        return scrub(value, secrets)

    changed = False
    out: dict = {}
    for name, value in record.items():
        if name == "request" and isinstance(value, dict):
            kind = record.get("kind")  # a tool's calls do not break the chains of the main calls
            out[name], was = _pack_request(value, store, clean, key, slot=f"{kind}:" if kind else "")
        elif name == "report" and isinstance(value, dict):
            out[name], was = _pack_report(value, store, clean, key)
        elif name == "summary_calls" and isinstance(value, list):
            parts = [_pack_summary(entry, store, clean, key) for entry in value]
            out[name], was = [p for p, _ in parts], any(w for _, w in parts)
        else:
            out[name] = clean(value)
            was = _changed(value, out[name])
        changed = changed or was
    out["version"] = VERSION
    return out, changed


def _pack_request(request: dict, store: ObjectStore, clean: Any, key: tuple, slot: str = "") -> tuple[dict, bool]:
    return _pack_fields(request, store, clean, key, dict(_REQUEST_PARTS), slot)


def _pack_report(report: dict, store: ObjectStore, clean: Any, key: tuple) -> tuple[dict, bool]:
    return _pack_fields(report, store, clean, key, {"packets": True})


def _pack_summary(entry: Any, store: ObjectStore, clean: Any, key: tuple) -> tuple[Any, bool]:
    if not isinstance(entry, dict):
        value = clean(entry)
        return value, _changed(entry, value)

    def request(value: dict) -> tuple[dict, bool]:
        return _pack_request(value, store, clean, key, slot="summary:")

    return _pack_fields(entry, store, clean, key, {"request": request})


def _pack_fields(entry: dict, store: ObjectStore, clean: Any, key: tuple, parts: dict[str, Any],
                 slot: str = "") -> tuple[dict, bool]:
    """(`entry` packed, whether redaction replaced anything). `parts`: field -> True (a list
    stored as a chain in `slot` + field), False (a list stored as one value) or a function
    packing a dict field; every other field is scrubbed inline."""
    out, changed = {}, False
    for name, value in entry.items():
        how = parts.get(name)
        if isinstance(how, bool) and isinstance(value, list) and value:
            out[name], was = (store.put_list(value, clean, key, slot=slot + name) if how
                              else store.put(value, clean, key))
        elif callable(how) and isinstance(value, dict):
            out[name], was = how(value)
        else:
            out[name] = clean(value)
            was = _changed(value, out[name])
        changed = changed or was
    return out, changed


def unpack(record: dict, folder: Path) -> dict:
    """`record` (read from a file in `folder`) whole: every ref replaced by what it names.
    Raises ValueError naming a missing object (the objects file is damaged or gone)."""
    if not isinstance(record, dict) or not _has_refs(record):
        return record
    objects = _objects(Path(folder))
    out = dict(record)
    if isinstance(out.get("request"), dict):
        out["request"] = _unpack_request(out["request"], objects)
    if isinstance(out.get("report"), dict) and "packets" in out["report"]:
        out["report"] = {**out["report"], "packets": resolve(out["report"]["packets"], objects, chain=True)}
    if isinstance(out.get("summary_calls"), list):
        out["summary_calls"] = [{**e, "request": _unpack_request(e["request"], objects)}
                                if isinstance(e, dict) and isinstance(e.get("request"), dict) else e
                                for e in out["summary_calls"]]
    return out


def _unpack_request(request: dict, objects: dict) -> dict:
    out = dict(request)
    for name, chain in _REQUEST_PARTS:
        if name in out:
            out[name] = resolve(out[name], objects, chain=chain)
    return out


def _has_refs(record: dict) -> bool:
    version = record.get("version")
    return isinstance(version, int) and version >= VERSION


def _objects(folder: Path) -> dict:
    """The objects of `folder`, read again only when the file changed."""
    path = folder / OBJECTS_FILE
    try:
        st = os.stat(path)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        return {}
    with _read_lock:
        hit = _read_cache.get(str(folder))
        if hit is not None and hit[0] == stamp:
            return hit[1]
    objects = read_objects(path)
    with _read_lock:
        _read_cache[str(folder)] = (stamp, objects)
    return objects


def _changed(before: Any, after: Any) -> bool:
    """Whether redaction replaced anything between `before` and its scrubbed copy `after`
    (tuples became lists: that is no change)."""
    if isinstance(before, dict):
        return not isinstance(after, dict) or before.keys() != after.keys() or any(
            _changed(v, after[k]) for k, v in before.items())
    if isinstance(before, (list, tuple)):
        return not isinstance(after, list) or len(before) != len(after) or any(
            _changed(a, b) for a, b in zip(before, after))
    return before is not after and before != after
