"""The seed design's terminal program, as its reader writes it: only the imports are Koroku's.

Run by ``tests/test_seed_program.py`` as a subprocess, on the Koroku home of
``KOROKU_HOME`` and the Gemini of ``GOOGLE_GEMINI_BASE_URL``. Kept as close to
the seed as the design describes it (SEED-DESIGN.md, "The terminal loop" and
the end of the persistence part); do not make it more Koroku-like.
"""

import asyncio

from koroku_tui import Agent
from koroku_tui.events import FunctionCallPart, FunctionResponsePart, TextPart


async def handle_tool_result(*, result, call_name, call_args, **kwargs):
    mark = "✗" if "error" in result else "✓"
    print(f"{mark} {call_name} {call_args}")


async def handle_model_response(*, message, **kwargs):
    for part in message.parts or []:
        if part.text and not part.thought:
            print(f"Koroku: {part.text}")


async def render_history_event(*, event):
    for part in event.parts:
        if isinstance(part, TextPart):
            if part.thought:
                continue
            label = "You" if event.role == "user" else "Koroku"
            print(f"{label}: {part.text}")
        elif isinstance(part, FunctionCallPart):
            continue
        elif isinstance(part, FunctionResponsePart):
            mark = "✗" if "error" in part.function_response.response else "✓"
            print(f"{mark} {part.fc_metadata.name} {part.fc_metadata.args}")


async def main():
    agent = Agent()
    agent.on("on_tool_result", handle_tool_result)
    agent.on("on_model_response", handle_model_response)
    await agent.initialize(replay_handler=render_history_event)
    while True:
        try:
            text = input()  # noqa: ASYNC250 (the seed reads stdin this plainly)
        except EOFError:
            break
        if text.strip().lower() in ("exit", "quit"):
            break
        if text.strip().lower() == "clear":
            await agent.session_manager.delete()
            print("History cleared.")
            continue
        message = text
        while message is not None:
            message = await agent.run(message)


if __name__ == "__main__":
    asyncio.run(main())
