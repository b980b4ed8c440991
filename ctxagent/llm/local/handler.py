"""The chat handler the offline model's server runs: prompt -> constrained completion -> OpenAI response with `tool_calls`.

Our own because llama-cpp-python's `chatml-function-calling` drops `tool` messages and
cannot stream automatic tool choice (checked in 0.3.36). Runs in the server process
(`ctxagent.llm.local.launcher`), registered as `ctxagent-<family>` (docs/local-model.md).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ctxagent.llm.local.calls import classify_prefix, grammar_text, parse_reply
from ctxagent.llm.local.format import ChatFamily, ParsedReply, family, render_prompt

DEFAULT_MAX_TOKENS = 512
"""Completion tokens when a request gives no max_tokens (the loop always gives one)."""

_GRAMMARS: dict[str, Any] = {}


def register_handler(family_name: str, policy: TurnPolicy | None = None) -> str:
    """Register the handler for `family_name` ("chatml", "gemma") with llama-cpp-python;
    returns the chat_format name to pass to the server (`ctxagent-<family>`)."""
    from llama_cpp import llama_chat_format

    name = f"ctxagent-{family_name}"
    llama_chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        name, make_handler(family(family_name), policy), overwrite=True
    )
    return name


@dataclass(frozen=True)
class TurnPolicy:
    """How much choice the model gets between calling a tool and answering (tool_choice "auto" only).

    call_first: the first reply to a user message must be a tool call. max_calls: after this many tool results
    since it the reply must be text (0: no limit). no_repeat: a call identical to one made since it is replaced
    by a text answer. Why each: docs/local-model.md, "How it works" (Turn policy).
    """

    call_first: bool = True
    max_calls: int = 3
    no_repeat: bool = True

    def choice(self, messages: list[dict], tool_choice: Any) -> Any:
        """The tool_choice to enforce for a request whose history is `messages`."""
        if tool_choice != "auto":
            return tool_choice
        results = sum(m.get("role") == "tool" for m in _since_user(messages))
        if results == 0 and self.call_first:
            return "required"
        if self.max_calls and results >= self.max_calls:
            return "none"
        return "auto"

    def refused_repeats(self, messages: list[dict]) -> set[tuple[str, str]]:
        """(name, canonical arguments) of the calls made since the last user message."""
        if not self.no_repeat:
            return set()
        return {(c.get("function", {}).get("name", ""), _canonical(c.get("function", {}).get("arguments") or "{}"))
                for m in _since_user(messages) for c in m.get("tool_calls") or []}


def _since_user(messages: list[dict]) -> list[dict]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return messages[i + 1:]
    return messages


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except json.JSONDecodeError:
        return arguments


def is_repeat(reply: ParsedReply, seen: set[tuple[str, str]]) -> bool:
    """True when `reply` is a call already in `seen` (see TurnPolicy.no_repeat)."""
    return any((name, _canonical(args)) in seen for name, args in reply.tool_calls)


def make_handler(fam: ChatFamily, policy: TurnPolicy | None = None):
    """A llama-cpp-python chat completion handler for chat family `fam`."""
    policy = policy or TurnPolicy()

    def handler(*, llama: Any, messages: list[dict], tools: list[dict] | None = None,
                tool_choice: Any = None, stream: bool = False, **params: Any) -> Any:
        use_tools = bool(tools) and tool_choice != "none"
        choice = policy.choice(messages, tool_choice or "auto") if use_tools else "none"
        seen = policy.refused_repeats(messages) if choice == "auto" else set()
        kwargs = _sampling(params, fam)

        def generate(want: Any) -> tuple[Any, str]:
            prompt = render_prompt(messages, tools if use_tools else [], fam, answer_now=use_tools and want == "none")
            grammar = _grammar(tools or [], want) if use_tools else None
            return llama.create_completion(prompt=prompt, grammar=grammar, stream=stream, **kwargs), prompt

        first, prompt = generate(choice)
        retry = (lambda: generate("none")[0]) if seen else None
        meta = {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "created": int(time.time()),
                "model": params.get("model") or "local"}
        if stream:
            n_prompt = len(llama.tokenize(prompt.encode("utf-8"), special=True))
            return _stream(first, meta, n_prompt, retry=retry, seen=seen)
        if retry is not None and is_repeat(parse_reply(first["choices"][0]["text"]), seen):
            return _response(retry(), meta)
        return _response(first, meta)

    return handler


def _grammar(tools: list[dict], tool_choice: Any) -> Any:
    from llama_cpp import LlamaGrammar

    key = json.dumps([tools, tool_choice], sort_keys=True)
    if key not in _GRAMMARS:
        if len(_GRAMMARS) > 16:
            _GRAMMARS.clear()
        _GRAMMARS[key] = LlamaGrammar.from_string(grammar_text(tools, tool_choice), verbose=False)
    return _GRAMMARS[key]


def _sampling(params: dict[str, Any], fam: ChatFamily) -> dict[str, Any]:
    stop = params.get("stop") or []
    stop = [stop] if isinstance(stop, str) else list(stop)
    keys = ("temperature", "top_p", "top_k", "min_p", "seed", "repeat_penalty",
            "presence_penalty", "frequency_penalty")
    out = {k: params[k] for k in keys if params.get(k) is not None}
    out["max_tokens"] = params.get("max_tokens") or DEFAULT_MAX_TOKENS
    out["stop"] = stop + list(fam.stop)
    return out


def _response(completion: dict, meta: dict) -> dict:
    choice = completion["choices"][0]
    reply = parse_reply(choice["text"])
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    finish = choice.get("finish_reason") or "stop"
    if reply.tool_calls:
        message["tool_calls"] = [_call(i, name, args) for i, (name, args) in enumerate(reply.tool_calls)]
        finish = "tool_calls"
    return {"object": "chat.completion", **meta, "usage": completion.get("usage"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}


def _call(index: int, name: str, arguments: str) -> dict:
    return {"id": f"call_{uuid.uuid4().hex[:16]}", "type": "function",
            "function": {"name": name, "arguments": arguments}}


def _chunk(meta: dict, delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
    chunk = {"object": "chat.completion.chunk", **meta,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _stream(pieces: Iterator[dict], meta: dict, prompt_tokens: int, *,
            retry: Callable[[], Iterator[dict]] | None = None,
            seen: set[tuple[str, str]] = frozenset()) -> Iterator[dict]:
    """Text streams as it comes; a tool call is buffered and sent as one complete delta
    (index 0, id, name, full arguments) once it has closed, so no half call is ever sent.
    A call that repeats one in `seen` is dropped and `retry()` (text required) streams
    in its place."""
    yield _chunk(meta, {"role": "assistant", "content": ""})
    state = {"buffer": "", "mode": "undecided", "finish": "stop", "count": 0}
    yield from _relay(pieces, meta, state)
    reply = parse_reply(state["buffer"])
    if state["mode"] != "text" and retry is not None and is_repeat(reply, seen):
        state.update(buffer="", mode="text")
        yield from _relay(retry(), meta, state)
        reply = parse_reply(state["buffer"])
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": state["count"],
             "total_tokens": prompt_tokens + state["count"]}
    finish = state["finish"]
    if state["mode"] != "text" and reply.tool_calls:
        name, args = reply.tool_calls[0]
        yield _chunk(meta, {"tool_calls": [{"index": 0, **_call(0, name, args)}]})
        finish = "tool_calls"
    elif state["mode"] != "text" and state["buffer"].strip():
        yield _chunk(meta, {"content": state["buffer"].strip()})
    yield _chunk(meta, {}, finish, usage)


def _relay(pieces: Iterator[dict], meta: dict, state: dict) -> Iterator[dict]:
    """Accumulate completion pieces into `state`; yield content chunks once it is text."""
    for piece in pieces:
        choice = piece["choices"][0]
        state["buffer"] += choice["text"]
        state["count"] += 1
        state["finish"] = choice.get("finish_reason") or state["finish"]
        if state["mode"] == "undecided":
            state["mode"] = classify_prefix(state["buffer"])
            if state["mode"] == "text" and state["buffer"].strip():
                yield _chunk(meta, {"content": state["buffer"].lstrip()})
        elif state["mode"] == "text" and choice["text"]:
            yield _chunk(meta, {"content": choice["text"]})
