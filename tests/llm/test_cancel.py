"""Cancelling a model call: the cancel event and Ctrl-C stop a slow or stalled stream at once."""

from __future__ import annotations

import threading

import pytest

from ctxagent.llm.errors import LLMCancelledError
from tests.llm.conftest import USER
from tests.support.fake_openai import error, text

SLOW = "x" * 200  # 50 chunks of 4 characters


@pytest.mark.timeout(20)
def test_cancel_event_stops_a_slow_stream_after_the_first_deltas(fake_openai, make_client):
    server = fake_openai([text(SLOW, delay=0.2)])  # the whole stream takes about 10 s
    cancel = threading.Event()
    deltas = []

    def on_delta(delta):
        deltas.append(delta)
        if len(deltas) == 2:
            cancel.set()

    with pytest.raises(LLMCancelledError):
        make_client(server).chat(USER, on_delta=on_delta, cancel=cancel)
    assert len(deltas) == 2  # nothing is delivered after the cancel


@pytest.mark.timeout(20)
def test_cancel_event_stops_a_stalled_stream(fake_openai, make_client):
    server = fake_openai([text("never arrives", delay=60)])  # no chunk for a minute
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    with pytest.raises(LLMCancelledError):
        make_client(server).chat(USER, cancel=cancel)
    timer.cancel()


@pytest.mark.timeout(20)
def test_cancel_cuts_a_backoff_wait_short(fake_openai, make_client):
    server = fake_openai([error(429, headers={"Retry-After": "60"}), text("late")])
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    with pytest.raises(LLMCancelledError):
        make_client(server).chat(USER, cancel=cancel)
    assert len(server.requests) == 1


def test_ctrl_c_during_the_stream_becomes_LLMCancelledError(fake_openai, make_client):
    server = fake_openai([text(SLOW, delay=0.05), text("next")])

    def on_delta(delta):
        raise KeyboardInterrupt

    client = make_client(server)
    with pytest.raises(LLMCancelledError, match="Ctrl-C"):
        client.chat(USER, on_delta=on_delta)
    assert client.chat(USER).content == "next"  # the client is usable afterwards


def test_an_already_set_cancel_event_sends_nothing_useful_back(fake_openai, make_client):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(LLMCancelledError):
        make_client(fake_openai([text("hi")])).chat(USER, cancel=cancel)
