"""Typed records of tool arguments and settings, validated with msgspec.

Not pydantic: its import and validator builds took about 100 ms of the 250 ms start-up
budget of `ctxagent tool` (issue 16). `Record` is the base class, `validate` builds one
from JSON-like data or raises `Invalid`, `json_schema` gives OpenAI tool parameters,
`fields` describes each field (default, bounds, description). docs/architecture.md.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import msgspec

R = TypeVar("R", bound="Record")
_MASK = "**********"
_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[(?:\.\.\.|\"[^\"]*\"|[^\]]*)\]")
_AT = re.compile(r"^(.*) - at `\$(.*)`$", re.DOTALL)
_INTERNAL = "internal"


class Record(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of the typed records: unknown fields refused by `validate`; keyword-only (a subclass
    with a required field after a defaulted one says `kw_only=True` itself: msgspec does not pass it on).

    Bounds and descriptions go in `Annotated[T, msgspec.Meta(gt=..., description=...)]`;
    `Meta(extra={"internal": True})` keeps a field out of `json_schema` (set by code, not the model).
    """

    def replace(self: R, **changes: Any) -> R:
        """A copy with `changes` applied (field name -> value), not validated."""
        return msgspec.structs.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready nested dict of the fields (secrets masked, paths as text)."""
        return msgspec.to_builtins(self, enc_hook=_encode)


class Secret:
    """A secret string (an API key): `**********` in repr, str and `to_dict`; the text only
    through `get_secret_value()`. Compares by value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = str(value)

    def get_secret_value(self) -> str:
        """The secret text."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{_MASK}')" if self._value else "Secret('')"

    def __str__(self) -> str:
        return _MASK if self._value else ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class Invalid(ValueError):
    """Data that does not fit a record: `loc` is where (field names and list indexes, () for
    the whole object), `msg` what is wrong (msgspec's message, e.g. "Expected `int` >= 1")."""

    def __init__(self, loc: tuple[str | int, ...], msg: str) -> None:
        self.loc, self.msg = loc, msg
        super().__init__(f"{'.'.join(map(str, loc))}: {msg}" if loc else msg)


def validate(record: type[R], data: Any, *, strict: bool = True, finite: bool = False) -> R:
    """`record` built from `data` (JSON-like: dicts, lists, str, numbers). strict=False reads
    "5" as 5 and "true" as True (a model's tool arguments); finite=True refuses NaN and
    infinities anywhere (settings). Raises Invalid (a missing field and a table's key are in its
    loc, a bad choice lists the choices); errors of `__post_init__` have loc ()."""
    if finite:
        _check_finite(data, ())
    try:
        return msgspec.convert(data, record, strict=strict, dec_hook=_decode)
    except msgspec.ValidationError as exc:
        raise _invalid(str(exc), record, data) from None


def json_schema(record: type[Record]) -> dict[str, Any]:
    """The JSON Schema of `record` as OpenAI tool `parameters`: references inlined, no titles,
    internal fields left out, a description inside an `anyOf` moved up to its property, enums
    in the order of their `Literal` (msgspec sorts them) and typed ("type": "string"). Built
    once per record (about 2 ms; the loop asks on every model call), a fresh copy each time."""
    return copy.deepcopy(_built_schema(record))


@cache
def _built_schema(record: type[Record]) -> dict[str, Any]:
    schema = msgspec.json.schema(record, schema_hook=_schema_hook)
    defs = schema.pop("$defs", {})
    out = _inline(schema, defs, ())
    hidden = [f.name for f in fields(record) if f.internal]
    for name in hidden:
        out.get("properties", {}).pop(name, None)
        if name in out.get("required", []):
            out["required"].remove(name)
    orders: dict[frozenset[Any], list[Any]] = {}
    _literal_orders(record, orders, set())
    _order_enums(out, orders)
    return out


@dataclass(frozen=True)
class FieldSpec:
    """One field of a record: `name`, `annotation` (the type without its Meta), `default`
    (factories called; None when `required`), numeric `bounds` ({"gt": 0, "le": 3600}),
    `max_length`, `description`, `internal` (left out of the JSON Schema)."""

    name: str
    annotation: Any
    default: Any
    required: bool
    bounds: dict[str, float]
    max_length: int | None
    description: str
    internal: bool


def fields(record: type[Record]) -> list[FieldSpec]:
    """Every field of `record`, in definition order (reads msgspec's type information)."""
    import msgspec.inspect as mi  # only for docs, range messages and schemas (start-up)

    info = mi.type_info(record)
    out = []
    for raw, typed in zip(msgspec.structs.fields(record), info.fields):
        bounds: dict[str, float] = {}
        max_length, description, internal = None, "", False
        for node in _nodes(typed.type):
            if isinstance(node, mi.Metadata):
                description = description or (node.extra_json_schema or {}).get("description", "")
                internal = internal or bool((node.extra or {}).get(_INTERNAL))
            for name in ("gt", "ge", "lt", "le"):
                if getattr(node, name, None) is not None:
                    bounds[name] = getattr(node, name)
            max_length = getattr(node, "max_length", None) if max_length is None else max_length
        out.append(FieldSpec(raw.name, _strip_meta(raw.type), _default(raw), raw.required, bounds, max_length,
                             description, internal))
    return out


def field_names(record: type[Record]) -> tuple[str, ...]:
    """The field names of `record` (no type inspection: cheap)."""
    return record.__struct_fields__


def field_default(record: type[Record], name: str) -> Any:
    """The default of field `name` of `record` (its factory called); None when the field is
    required or does not exist (no type inspection: cheap)."""
    raw = next((f for f in msgspec.structs.fields(record) if f.name == name), None)
    return None if raw is None else _default(raw)


def _default(raw: msgspec.structs.FieldInfo) -> Any:
    if raw.default is not msgspec.NODEFAULT:
        return raw.default
    return None if raw.default_factory is msgspec.NODEFAULT else raw.default_factory()


def _nodes(node: Any) -> list[Any]:
    import msgspec.inspect as mi

    out = [node]
    if isinstance(node, mi.Metadata):
        out += _nodes(node.type)
    elif isinstance(node, mi.UnionType):
        for member in node.types:
            out += _nodes(member)
    return out


def _strip_meta(annotation: Any) -> Any:
    from typing import Annotated, Union, get_args, get_origin

    if get_origin(annotation) is Annotated:
        return _strip_meta(get_args(annotation)[0])
    if get_origin(annotation) is Union or type(annotation).__name__ == "UnionType":
        members = tuple(_strip_meta(a) for a in get_args(annotation))
        return Union[members]  # type: ignore[return-value]  # noqa: UP007 (built from a tuple)
    return annotation


def _invalid(text: str, record: Any, data: Any) -> Invalid:
    """msgspec's error `text` as an Invalid: `$.a[0]` as loc ("a", 0); a table's `[...]` as the
    key whose value has the type msgspec got; a missing field put in loc; choices listed; NaN
    against a bound called not finite."""
    match = _AT.match(text)
    msg, path = (match.group(1), match.group(2)) if match else (text, "")
    loc: list[str | int] = []
    node, got = data, re.search(r", got `(\w+)`$", msg)
    for m in _STEP.finditer(path):
        name, index = m.groups()[:2]
        if name or index:
            step: str | int | None = name or int(index)
        else:  # `[...]`: a table's value, key not given
            step = next((k for k, v in node.items() if got and _kind(v) == got.group(1)), None) \
                if isinstance(node, dict) else None
            if step is None:
                break
        loc.append(step)
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            node = None
    missing = re.fullmatch(r"Object missing required field `(.+)`", msg)
    if re.match(r"Expected `float` [<>]", msg) and not _finite(node):  # NaN fails every bound
        msg = f"Expected a finite number, got {node}"
    elif missing:
        loc.append(missing.group(1))
        msg = "required field missing"
    elif msg.startswith("Invalid enum value "):
        choices = _choices(record, tuple(loc))
        if choices:
            msg += "; use one of " + ", ".join(map(repr, choices))
    return Invalid(tuple(loc), msg)


def _finite(value: Any) -> bool:
    """False for a float (or text read as one, as lax reading does) that is NaN or infinite."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return True


def _kind(value: Any) -> str:
    """msgspec's name of the type of JSON-like `value` ("str", "int", "array", "object"...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {list: "array", tuple: "array", dict: "object"}.get(type(value), type(value).__name__)


def _choices(kind: Any, loc: tuple[str | int, ...]) -> list[Any] | None:
    """The values of the `Literal` or Enum at `loc` inside `kind`; None when there is none (or
    it is one member of a union of other types: "all" or a list of names)."""
    import enum
    from typing import Annotated, Literal, Union, get_args, get_origin

    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _choices(args[0], loc)
    if origin is Union or type(kind).__name__ == "UnionType":
        members = [a for a in args if a is not type(None)]
        if not loc:
            return _choices(members[0], loc) if len(members) == 1 else None
        return next((c for c in (_choices(a, loc) for a in members) if c), None)
    if not loc:
        if origin is Literal:
            return list(args)
        return [m.value for m in kind] if isinstance(kind, type) and issubclass(kind, enum.Enum) else None
    step, rest = loc[0], loc[1:]
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct) and isinstance(step, str):
        return next((_choices(f.type, rest) for f in msgspec.structs.fields(kind) if f.name == step), None)
    if origin in (list, tuple, set, frozenset) and isinstance(step, int) and args:
        return _choices(args[0], rest)
    if origin is dict and len(args) == 2:
        return _choices(args[1], rest)
    return None


def _check_finite(data: Any, loc: tuple[str | int, ...]) -> None:
    if isinstance(data, float) and not math.isfinite(data):
        raise Invalid(loc, f"Expected a finite number, got {data}")
    if isinstance(data, dict):
        for key, value in data.items():
            _check_finite(value, (*loc, str(key)))
    elif isinstance(data, (list, tuple)):
        for i, value in enumerate(data):
            _check_finite(value, (*loc, i))


def _decode(kind: type, value: Any) -> Any:
    if kind is Secret and isinstance(value, (str, Secret)):
        return value if isinstance(value, Secret) else Secret(value)
    if kind is Secret:  # a TypeError becomes msgspec's ValidationError, with where it is
        raise TypeError(f"Expected `str`, got `{_kind(value)}`")
    raise NotImplementedError(f"cannot read {type(value).__name__} as {getattr(kind, '__name__', kind)}")


def _encode(value: Any) -> Any:
    if isinstance(value, Secret):
        return str(value)
    if hasattr(value, "__fspath__"):
        return str(value)
    raise NotImplementedError(f"cannot write {type(value).__name__} as JSON")


def _schema_hook(kind: type) -> dict[str, Any]:
    if kind is Secret:
        return {"type": "string", "writeOnly": True}
    raise NotImplementedError(f"no JSON Schema for {kind!r}")


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"json_schema: {name} refers to itself; a tool's parameters cannot be recursive")
        return _inline({**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}, defs, (*seen, name))
    out = {k: _inline(v, defs, seen) for k, v in node.items() if k != "title"}
    if "properties" in node:  # property names are data, not keywords: keep a property called "title"
        out["properties"] = {k: _lift(_inline(v, defs, seen)) for k, v in node["properties"].items()}
    if out.get("required") == []:
        del out["required"]
    return out


def _literal_orders(kind: Any, orders: dict[frozenset[Any], list[Any]], seen: set[type]) -> None:
    """The values of every `Literal` inside `kind` (a record, nested ones too), as declared."""
    from typing import Literal, get_args, get_origin

    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        if kind not in seen:
            seen.add(kind)
            for field in msgspec.structs.fields(kind):
                _literal_orders(field.type, orders, seen)
    elif get_origin(kind) is Literal:
        orders.setdefault(frozenset(get_args(kind)), list(get_args(kind)))
    else:
        for arg in get_args(kind):
            _literal_orders(arg, orders, seen)


def _order_enums(node: Any, orders: dict[frozenset[Any], list[Any]]) -> None:
    if isinstance(node, list):
        for item in node:
            _order_enums(item, orders)
    elif isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            node["enum"] = orders.get(frozenset(node["enum"]), node["enum"])
            if "type" not in node and all(isinstance(v, str) for v in node["enum"]):
                node["type"] = "string"
        for value in node.values():
            _order_enums(value, orders)


def _lift(prop: dict[str, Any]) -> dict[str, Any]:
    """{"anyOf": [{"description": d, ...}, {"type": "null"}]} -> {"description": d, "anyOf": [...]}."""
    if "description" in prop or "anyOf" not in prop:
        return prop
    found = [b.pop("description") for b in prop["anyOf"] if isinstance(b, dict) and "description" in b]
    return {"description": found[0], **prop} if found else prop
