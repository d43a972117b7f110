"""Hook handlers in both forms: the seed design's keywords and Koroku's typed payloads.

Each form, sync and async, for the three hooks the seed program uses; the
values received are checked against what the fake server sent and was sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import open_agent

from koroku_tui.agent import ModelResponse, TextDelta, ToolCallFinished, ToolCallStarted
from koroku_tui.agent.hook_forms import PAYLOAD, call_form
from koroku_tui.agent.hooks import HookEmitter
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)

ARGS = {"path": "a.txt"}


def script_tool_turn(fake: FakeGemini, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("apples\n")
    fake.add(call_reply(("read_file", ARGS)), text_reply("It holds apples."))


def keyword_handlers(got: dict[str, list[dict[str, Any]]], *, asynchronous: bool) -> list[Any]:
    """The seed's handlers, written as its program writes them (keyword-only)."""

    def model_response(*, message: types.Content, context: list[Any]) -> None:
        got["on_model_response"].append({"message": message, "context": context})

    def tool_call(*, call: types.FunctionCall, context: list[Any]) -> None:
        got["on_tool_call"].append({"call": call, "context": context})

    def tool_result(
        *, result: dict[str, Any], call_name: str, call_args: dict[str, Any], context: list[Any]
    ) -> None:
        got["on_tool_result"].append(
            {"result": result, "call_name": call_name, "call_args": call_args, "context": context}
        )

    async def model_response_async(*, message: types.Content, context: list[Any]) -> None:
        model_response(message=message, context=context)

    async def tool_call_async(*, call: types.FunctionCall, context: list[Any]) -> None:
        tool_call(call=call, context=context)

    async def tool_result_async(
        *, result: dict[str, Any], call_name: str, call_args: dict[str, Any], context: list[Any]
    ) -> None:
        tool_result(result=result, call_name=call_name, call_args=call_args, context=context)

    if asynchronous:
        return [model_response_async, tool_call_async, tool_result_async]
    return [model_response, tool_call, tool_result]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_keyword_handlers_get_the_seed_keywords(
    fake: FakeGemini, tmp_path: Path, asynchronous: bool
) -> None:
    script_tool_turn(fake, tmp_path)
    got: dict[str, list[dict[str, Any]]] = {
        "on_model_response": [],
        "on_tool_call": [],
        "on_tool_result": [],
    }
    async with open_agent(fake, tmp_path) as agent:
        on_model, on_call, on_result = keyword_handlers(got, asynchronous=asynchronous)
        agent.on("on_model_response", on_model)
        agent.on("on_tool_call", on_call)
        agent.on("on_tool_result", on_result)
        await agent.run_turn("What is in a.txt?")
        final_context = agent.context

    first, last = got["on_model_response"]
    assert isinstance(first["message"], types.Content)
    calls = [p.function_call for p in first["message"].parts or () if p.function_call]
    assert [(c.name, c.args) for c in calls] == [("read_file", ARGS)]
    assert (last["message"].parts or [])[0].text == "It holds apples."
    # The context is the model's, the reply included: what the next request sends.
    assert len(first["context"]) == len(fake.generate_requests[1].contents) - 1
    assert [e.role for e in last["context"]] == ["user", "model", "user", "model"]
    assert last["context"] == final_context

    (call,) = got["on_tool_call"]
    assert isinstance(call["call"], types.FunctionCall)
    assert (call["call"].name, call["call"].args) == ("read_file", ARGS)
    assert call["call"].id == calls[0].id

    (result,) = got["on_tool_result"]
    sent = fake.generate_requests[1].contents[-1]["parts"][0]["functionResponse"]
    assert result["result"] == sent["response"] == {"output": "apples\n"}
    assert (result["call_name"], result["call_args"]) == ("read_file", ARGS)
    assert [e.role for e in result["context"]] == ["user", "model"]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_payload_handlers_still_get_typed_payloads(
    fake: FakeGemini, tmp_path: Path, asynchronous: bool
) -> None:
    script_tool_turn(fake, tmp_path)
    got: list[object] = []

    def record(payload: object) -> None:
        got.append(payload)

    async def record_async(payload: object) -> None:
        got.append(payload)

    handler = record_async if asynchronous else record
    async with open_agent(fake, tmp_path) as agent:
        agent.on("on_model_response", handler)
        agent.on("on_tool_call", handler)
        agent.on("on_tool_result", handler)
        await agent.run_turn("What is in a.txt?")

    first, started, finished, last = got
    assert isinstance(first, ModelResponse) and first.function_calls[0].args == ARGS
    assert isinstance(started, ToolCallStarted) and (started.name, started.args) == (
        "read_file",
        ARGS,
    )
    assert isinstance(finished, ToolCallFinished) and finished.result.output == "apples\n"
    assert isinstance(last, ModelResponse) and last.text == "It holds apples."
    assert isinstance(last.event, SessionEvent) and last.event.role == "model"


async def test_mixed_forms_and_every_other_hook_offer_payload_and_context(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("Hello there.", pieces=2))
    seen: list[tuple[str, Any]] = []

    def delta(*, payload: TextDelta) -> None:
        seen.append(("delta", payload.text))

    def both(payload: ModelResponse, *, context: list[Any]) -> None:
        seen.append(("both", (payload.text, len(context))))

    def everything(**kwargs: Any) -> None:
        seen.append(("everything", sorted(kwargs)))

    async with open_agent(fake, tmp_path) as agent:
        agent.on("on_text_delta", delta)
        agent.on("on_model_response", both)
        agent.on("on_model_response", everything)
        await agent.run_turn("hi")

    assert seen == [
        ("delta", "Hello "),
        ("delta", "there."),
        ("both", ("Hello there.", 2)),
        ("everything", ["context", "message", "payload"]),
    ]


def test_the_call_form_is_decided_from_the_signature() -> None:
    offered = ("result", "call_name", "call_args", "payload", "context")

    def payload(p: object) -> None: ...
    def seed(*, result: object, call_name: str, **rest: object) -> None: ...
    def named(result: object, call_args: object) -> None: ...
    def anything(*args: object) -> None: ...

    assert call_form("on_tool_result", payload, offered) is PAYLOAD
    assert call_form("on_tool_result", seed, offered) == frozenset(offered)
    assert call_form("on_tool_result", named, offered) == frozenset({"result", "call_args"})
    assert call_form("on_tool_result", anything, offered) is PAYLOAD


def test_a_handler_fitting_neither_form_is_refused_at_registration() -> None:
    agent = HookEmitter()

    def two(a: object, b: object) -> None: ...
    def unknown_keyword(*, colour: str) -> None: ...

    for handler in (two, unknown_keyword):
        with pytest.raises(ValueError, match="neither one payload argument nor") as caught:
            agent.on("on_tool_result", handler)
        assert "\n" not in str(caught.value)
    assert not agent.has_handlers("on_tool_result")


def test_print_and_defaulted_seed_handlers_get_what_they_can_use() -> None:
    """``print`` has keyword-only parameters, none of the hook's: it gets the payload.
    A seed handler whose keywords all have defaults still gets the keywords."""
    offered = ("payload", "message", "context")

    def defaulted(message: object = None, context: object = None) -> None: ...

    assert call_form("on_text_delta", print, ("payload", "context")) is PAYLOAD
    assert call_form("on_model_response", defaulted, offered) == frozenset({"message", "context"})
