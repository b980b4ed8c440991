"""The context engine: what each model call sees, under a token budget, and why.

Public API (Hello-Agents chapter 9 conventions):
`ContextBuilder`, `ContextConfig`, `ContextPacket`, `Message`, `TokenCounter`.
Stages: `gather`, `select`, `structure`, `compress`; message rules in `messages`;
snapshots of every call in `snapshot`.
"""

from ctxagent.context.builder import ContextBuilder
from ctxagent.context.packet import ContextConfig, ContextPacket, Message
from ctxagent.context.tokens import TokenCounter, estimate_tokens

__all__ = ["ContextBuilder", "ContextConfig", "ContextPacket", "Message", "TokenCounter", "estimate_tokens"]
