"""A settings model at its defaults (or a preset's values), built without a validator (issue 16).

`model_construct` alone asks `inspect.signature` of every `default_factory` (about 1 ms
each for `list` and `dict`); calling the factories here skips that. Only for defaults and
presets, constants of the code: tests/config/test_settings_defaults.py checks that what
`load_settings` builds this way equals the validated model.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def defaults(model: type[M], /, **values: Any) -> M:
    """`model(**values)` without validation, for `values` that are constants of the code (presets):
    the same fields, `model_fields_set` = the keys of `values`. Raises TypeError when a required
    field has no value."""
    fields = model.model_fields
    missing = [name for name, info in fields.items() if info.is_required() and name not in values]
    if missing:
        raise TypeError(f"{model.__name__}: no value for the required field(s) {missing}")
    made = {name: info.default_factory() for name, info in fields.items()  # type: ignore[call-arg]
            if info.default_factory is not None and name not in values}
    return model.model_construct(_fields_set=set(values), **made, **values)
