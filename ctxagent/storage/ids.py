"""Ids given by unique prefix: sessions, notes, checkpoints' sessions, memories.

`resolve_id(given, known, what=..., listing=...)` returns the one id `given` names: the id
itself, else the only id starting with it. None found or several found is a NotFoundError
that says so, lists the candidates (at most `SHOWN`) and how to list them all.
"""

from __future__ import annotations

from typing import Iterable

from ctxagent.errors import NotFoundError

#: Candidates named in an "ambiguous prefix" error.
SHOWN = 8


def resolve_id(given: str, known: Iterable[str], *, what: str, listing: str) -> str:
    """The id of `known` that `given` names (exact, else unique prefix). `what`: "session",
    "note"...; `listing`: how to list the ids, e.g. "list them with `ctxagent sessions`".
    Raises NotFoundError (none, or an ambiguous prefix naming its candidates)."""
    ids = sorted(set(known))
    if given in ids:
        return given
    matches = [i for i in ids if given and i.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise NotFoundError(f"no {what} {given!r}; {listing}")
    shown = ", ".join(matches[:SHOWN]) + (f" and {len(matches) - SHOWN} more" if len(matches) > SHOWN else "")
    raise NotFoundError(f"{what} id prefix {given!r} is ambiguous: it starts {len(matches)} {what} ids ({shown}); "
                        "give more characters")
