"""A settings model at its defaults, built without a validator (start-up, issue 16).

`model_construct` alone asks `inspect.signature` of every `default_factory` (about 1 ms
each for `list` and `dict`); calling the factories here skips that. Only for defaults,
which are constants of the code: tests/config/test_settings_defaults.py checks that each
equals the validated `Model()`.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def defaults(model: type[M]) -> M:
    """`model()` without validation: the same values, no field set (`model_fields_set` empty).
    Raises TypeError for a model with a required field (it has no defaults)."""
    fields = model.model_fields
    required = [name for name, info in fields.items() if info.is_required()]
    if required:
        raise TypeError(f"{model.__name__} has required fields {required}: it has no defaults")
    made = {name: info.default_factory() for name, info in fields.items()  # type: ignore[call-arg]
            if info.default_factory is not None}
    return model.model_construct(_fields_set=set(), **made)
