"""How the model acts: native tool calls, or one action per text reply (XML, ReAct).

`PROTOCOLS` maps each name of `[model] protocol` to its class; `get_protocol(name)`
returns one. See docs/protocols.md.
"""

from __future__ import annotations

from ctxagent.errors import ConfigError
from ctxagent.protocols.base import OBSERVATION_PREFIX, PROTOCOL_ERROR, Decoded, WireProtocol
from ctxagent.protocols.native import NativeProtocol
from ctxagent.protocols.react import ReactProtocol
from ctxagent.protocols.xml import XmlProtocol

__all__ = ["OBSERVATION_PREFIX", "PROTOCOLS", "PROTOCOL_ERROR", "Decoded", "FALLBACK", "MAX_VIOLATIONS", "WireProtocol",
           "get_protocol"]

PROTOCOLS = {"native": NativeProtocol, "xml": XmlProtocol, "react": ReactProtocol}
#: The protocol a session switches to when the server refuses the `tools` parameter.
FALLBACK = "xml"
#: Replies in a row that may break a text protocol before the turn ends (the seed's MAX_RETRY).
MAX_VIOLATIONS = 3


def get_protocol(name: str) -> WireProtocol:
    """The protocol called `name`. Raises ConfigError naming the valid ones."""
    try:
        return PROTOCOLS[name]()
    except KeyError:
        raise ConfigError(f"unknown protocol {name!r}; use one of {', '.join(PROTOCOLS)} "
                          "([model] protocol or --protocol)", setting="model.protocol") from None
