"""What the demo's fake Gemini says: one responder that follows the conversation.

:class:`DemoScript` is installed as the FakeGemini's ``on_empty`` item, so it
answers every generate request. It reads the request (the last user message,
the calls already made in this turn and their responses, whether tools are
offered, which model is asked) and returns the next step, so the demo reacts
to whatever the user types instead of replaying a fixed script:

* the compaction model is asked          -> a short summary of the transcript;
* no tools offered (the guardrail fired) -> a summary that asks the user how to go on;
* "loop" / "guardrail"                   -> one tool call per step, until tools are withdrawn;
* "remember" / "last time" / "did we decide" -> search_history, read_session on the first hit,
                                           then an answer citing its session (``recall_scene``);
* "run" / "command" / "test"             -> run_command (the approval modal), then its output;
* "files" / "read" / "list"              -> list_directory, read_file x2, then a summary;
* "compact" / "summarise"                -> a summary so far, and how ctrl+o works;
* "help", "hello", "hi" (the opening)    -> the streamed greeting;
* anything else                          -> a Markdown echo streamed in small chunks,
                                           the first message of a session too.

It runs in the server's thread and keeps no state: everything it needs is in
the request, which is also what makes it work after a compaction or a restart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koroku_tui.fake_gemini import (
    RecordedRequest,
    Reply,
    ScriptItem,
    Usage,
    call_reply,
    last_user_text,
)
from koroku_tui.fake_gemini import text_reply as _text_reply
from koroku_tui.fake_gemini.wire import estimate_request_tokens, get_field
from koroku_tui.modes.demo import recall_scene
from koroku_tui.modes.demo.workspace import unit_test_command

__all__ = ["LOOP_TARGET", "TURN_WEIGHT", "DemoScript", "RequestView"]

TURN_WEIGHT = 2_500
"""Extra prompt tokens reported per user message in the context.

The demo's messages are tiny; without this the gauge would hardly move in a
20,000-token window. With it the context fills up after about six turns, so
an automatic compaction happens during a normal try-out."""

LOOP_TARGET = "secret-plan.md"
"""The file the "loop" scenario hunts for; it does not exist, so the hunt never ends."""

_LOOP_GUESSES = (".", "secret-plan.md", "docs", "plans/secret-plan.md", "notes.md", "todo.txt")
_CHARS_PER_PIECE = 6  # small stream chunks, so the streaming is visible
_BASE_CHUNK_DELAY = 0.02
_COMPACTION_PREFIX = "The conversation to summarise:"

_LOOP = re.compile(r"\b(loop\w*|guardrail\w*)\b")
_RUN = re.compile(r"\b(run\w*|command\w*|tests?|execute|shell)\b")
_FILES = re.compile(r"\b(files?|read|list|folders?|director(y|ies)|ls)\b")
_COMPACT = re.compile(r"\b(compact\w*|summar(y|i[sz]e\w*))\b")
_HELLO = re.compile(r"\b(help|hello|hi|hey)\b")
_BACKTICKS = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class ToolExchange:
    """One call the model made in this turn, and its response if it came."""

    name: str
    args: dict[str, Any]
    response: dict[str, Any] | None = None


@dataclass
class RequestView:
    """The parts of a generate request the demo decides on."""

    model: str
    offers_tools: bool
    user_texts: list[str] = field(default_factory=list)
    """Every user message with text, oldest first (tool responses have none)."""
    exchanges: list[ToolExchange] = field(default_factory=list)
    """The calls made since the last user message, in order."""
    prompt_tokens: int = 0

    @classmethod
    def of(cls, request: RecordedRequest) -> RequestView:
        body = request.body if isinstance(request.body, dict) else {}
        view = cls(model=request.model or "", offers_tools=bool(get_field(body, "tools")))
        contents = request.contents
        if not view.offers_tools and contents and _texts(contents[-1]):
            # Without tools the agent appends its guardrail instruction as a
            # user message: it is not the user speaking, and this turn's calls
            # come before it.
            contents = contents[:-1]
        pending: list[tuple[object, int]] = []  # (call id, index) still unanswered
        for content in contents:
            texts = _texts(content)
            if content.get("role") == "user" and texts:
                view.user_texts.append(texts)
                view.exchanges.clear()
                pending.clear()
            for part in content.get("parts") or ():
                call = get_field(part, "functionCall")
                if isinstance(call, dict):
                    exchange = ToolExchange(str(call.get("name")), dict(call.get("args") or {}))
                    pending.append((call.get("id"), len(view.exchanges)))
                    view.exchanges.append(exchange)
                answer = get_field(part, "functionResponse")
                if isinstance(answer, dict) and pending:
                    # Pair by id; responses come in call order, so the oldest is the fallback.
                    at = next((i for i, p in enumerate(pending) if p[0] == answer.get("id")), 0)
                    index = pending.pop(at)[1]
                    found = view.exchanges[index]
                    response = dict(answer.get("response") or {})
                    view.exchanges[index] = ToolExchange(found.name, found.args, response)
        user_messages = len(view.user_texts)
        view.prompt_tokens = estimate_request_tokens(body) + TURN_WEIGHT * user_messages
        return view

    @property
    def user_text(self) -> str:
        """The message that opened this turn ("" if there is none)."""
        return self.user_texts[-1] if self.user_texts else ""

    @property
    def calls_made(self) -> int:
        return len(self.exchanges)


def _texts(content: dict[str, Any]) -> str:
    parts = content.get("parts") or ()
    return "".join(
        p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
    )


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _output(exchange: ToolExchange) -> str | None:
    response = exchange.response or {}
    value = response.get("output")
    return value if isinstance(value, str) else None


def _error(exchange: ToolExchange) -> str:
    response = exchange.response or {}
    return str(response.get("error") or "no answer")


def _fence(text: str) -> str:
    """``text`` in a code fence long enough that its own backticks cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text.rstrip()}\n{ticks}"


@dataclass(frozen=True)
class DemoScript:
    """The demo's responder; call it with a request to get the next step.

    Args:
        workspace: the demo's scratch folder (named in the greeting).
        compaction_model: requests for this model are compaction requests.
        pace: multiplies every streaming delay; tests use 0 to run fast.
        max_tool_calls: the agent's per-turn budget, told in the loop answer.
    """

    workspace: Path
    compaction_model: str
    pace: float = 1.0
    max_tool_calls: int = 15

    def __call__(self, request: RecordedRequest) -> ScriptItem:
        view = RequestView.of(request)
        # Checked first: the compaction request offers no tools either.
        asked = last_user_text(request)
        if view.model == self.compaction_model or asked.startswith(_COMPACTION_PREFIX):
            return self._text(self._compaction_summary(asked), view, stream=False)
        if not view.offers_tools:
            return self._guardrail_stop(view)
        said = view.user_text.lower()
        if _LOOP.search(said):
            return self._loop(view)
        if recall_scene.RECALL.search(said):
            return self._recall(view)
        if _RUN.search(said):
            return self._run(view)
        if _FILES.search(said):
            return self._files(view)
        if _COMPACT.search(said):
            return self._text(self._summary_so_far(view), view)
        if _HELLO.search(said):
            return self._text(self._greeting(), view, thought="Greeting the user.")
        return self._text(self._echo(view.user_text), view)

    # -- building replies ----------------------------------------------------

    def _text(
        self, text: str, view: RequestView, *, thought: str | None = None, stream: bool = True
    ) -> Reply:
        pieces = max(1, len(text) // _CHARS_PER_PIECE) if stream else 1
        return _text_reply(
            text,
            thought=thought,
            pieces=pieces,
            signature_chunk=True,  # as Gemini 3 does; the agent must keep that signature
            usage=Usage(prompt_tokens=view.prompt_tokens),
            chunk_delay=_BASE_CHUNK_DELAY * self.pace,
        )

    def _calls(
        self, view: RequestView, *calls: tuple[str, dict[str, Any]], text: str | None = None
    ) -> Reply:
        return call_reply(
            *calls,
            text=text,
            usage=Usage(prompt_tokens=view.prompt_tokens),
            chunk_delay=_BASE_CHUNK_DELAY * 5 * self.pace,  # a beat before the calls appear
        )

    # -- scenarios -------------------------------------------------------------

    def _greeting(self) -> str:
        return (
            "# Welcome to the Koroku demo\n\n"
            "Nothing here talks to Google: a scripted stand-in for Gemini runs inside "
            "this process, and the real Gemini SDK talks to it over loopback. The "
            "tools work for real, in a scratch folder made for this demo "
            f"(`{self.workspace.name}`), never in your own files.\n\n"
            "Things to type:\n\n"
            "- **show me the files**: lists the folder and reads two files (tool calls)\n"
            "- **run the tests**: runs a command, after asking your approval\n"
            "- **loop**: a model that keeps calling tools, until Koroku's guardrail stops it\n"
            "- **compact**: what a summary looks like; press **ctrl+o** to compact for real\n"
            "- **what did we decide about the backup script last time?**: searches your "
            "earlier sessions, reads the one it finds, and answers citing it\n"
            "- anything else: a Markdown echo, streamed in small pieces\n\n"
            "Keys: `ctrl+o` compact, `ctrl+r` history, `ctrl+t` tool sidebar, "
            "`ctrl+l` new session, `Esc` cancel a turn, `ctrl+q` quit."
        )

    def _files(self, view: RequestView) -> Reply:
        if not view.exchanges:
            return self._calls(
                view, ("list_directory", {"path": "."}), text="Let me look at the workspace."
            )
        if len(view.exchanges) == 1:
            listing = _output(view.exchanges[0]) or ""
            names = [n for n in listing.splitlines() if n and not n.endswith("/")]
            # Prose files first: they make the better summary.
            names.sort(key=lambda n: (not n.endswith((".md", ".txt")), n))
            if names:
                return self._calls(view, *(("read_file", {"path": n}) for n in names[:2]))
        return self._text(self._files_summary(view.exchanges), view)

    def _files_summary(self, exchanges: Sequence[ToolExchange]) -> str:
        listing = _output(exchanges[0]) or _error(exchanges[0])
        entries = [n for n in listing.splitlines() if n.strip()]
        lines = ["## What is in the workspace", ""]
        lines.append(
            f"The folder holds {len(entries)} entries: " + ", ".join(f"`{n}`" for n in entries)
        )
        lines.append("")
        for exchange in exchanges[1:]:
            path = str(exchange.args.get("path"))
            text = _output(exchange)
            if text is None:
                lines.append(f"- **{path}**: could not be read ({_shorten(_error(exchange), 80)})")
                continue
            rows = text.splitlines()
            first = next((r for r in rows if r.strip()), "")
            detail = f"- **{path}**: {len(rows)} lines, starting with `{_shorten(first, 60)}`"
            open_items = sum(1 for r in rows if r.startswith("- [ ]"))
            if open_items:
                detail += f"; {open_items} open to-do items"
            lines.append(detail)
        lines += ["", "Every row in the tool sidebar (`ctrl+t`) is one of those calls."]
        return "\n".join(lines)

    def _run(self, view: RequestView) -> Reply:
        if not view.exchanges:
            quoted = _BACKTICKS.search(view.user_text)
            command = quoted.group(1) if quoted else unit_test_command()
            return self._calls(
                view,
                ("run_command", {"command": command}),
                text="I will run that in the demo workspace. Commands need your approval first.",
            )
        exchange = view.exchanges[-1]
        output = _output(exchange)
        if output is None:
            return self._text(
                f"Nothing ran: {_shorten(_error(exchange), 300)}\n\n"
                "That is the approval prompt at work: `run_command` and `write_file` "
                "always ask first (unless you allowed them for the session).",
                view,
            )
        passed = output.startswith("Exit code: 0")
        verdict = "It worked (exit code 0)." if passed else "The command failed."
        command = str(exchange.args.get("command"))
        return self._text(
            f"I ran `{command}`. {verdict} This is its real output:\n\n{_fence(output)}", view
        )

    def _recall(self, view: RequestView) -> Reply:
        step = recall_scene.next_step(view.user_text, [e.response for e in view.exchanges])
        if step.call is not None:
            return self._calls(view, step.call, text=step.text or None)
        return self._text(step.text or "", view)

    def _loop(self, view: RequestView) -> Reply:
        step = view.calls_made
        guess = _LOOP_GUESSES[step % len(_LOOP_GUESSES)]
        call = (
            ("list_directory", {"path": guess})
            if "." not in guess or guess == "."
            else ("read_file", {"path": guess})
        )
        text = f"Looking for `{LOOP_TARGET}`…" if step == 0 else None
        return self._calls(view, call, text=text)

    def _guardrail_stop(self, view: RequestView) -> Reply:
        made = view.calls_made
        failed = sum(1 for e in view.exchanges if _output(e) is None)
        text = (
            f"I made {made} tool calls looking for `{LOOP_TARGET}` and did not find it "
            f"({failed} of them failed). Koroku has stopped me there: after "
            f"{self.max_tool_calls} calls in one turn it withdraws the tools, so a model "
            "stuck in a loop cannot run forever.\n\n"
            "What I checked: the workspace folder, a `docs` folder, a `plans` folder, "
            "and the two text files, several times.\n\n"
            "Should I keep looking somewhere else, or can you tell me where the plan is?"
        )
        return self._text(text, view)

    def _summary_so_far(self, view: RequestView) -> str:
        asked = [f"- {_shorten(t, 60)}" for t in view.user_texts[:-1]] or ["- (nothing yet)"]
        return (
            "## The conversation so far\n\n"
            + "\n".join(asked)
            + "\n\nPress **ctrl+o** to compact for real: the compaction model writes a "
            "summary like this one, older turns are replaced by it (the marker in the "
            "transcript), and it is saved in the memory folder. It also happens by "
            "itself when the context gauge gets near full."
        )

    def _compaction_summary(self, transcript: str) -> str:
        lines = transcript.removeprefix(_COMPACTION_PREFIX).splitlines()
        asked = [_shorten(line[len("User: ") :], 40) for line in lines if line.startswith("User: ")]
        tools = sorted({line.split()[2] for line in lines if line.startswith("Koroku called ")})
        calls = sum(1 for line in lines if line.startswith("Koroku called "))
        earlier = [line for line in lines if line.startswith("Earlier summary: ")]
        summary = "Demo so far: the user said " + "; ".join(f'"{a}"' for a in asked) + "."
        if calls:
            summary += f" Koroku made {calls} tool calls ({', '.join(tools)})."
        if earlier:
            summary += " Before that: " + _shorten(earlier[-1][len("Earlier summary: ") :], 160)
        return summary

    def _echo(self, text: str) -> str:
        quoted = "\n".join(f"> {line}" for line in text.splitlines() or [""])
        words = len(text.split())
        return (
            "## You said\n\n"
            f"{quoted}\n\n"
            f"- {words} words, {len(text)} characters\n"
            f"- as JSON: `{_shorten(json.dumps(text), 60)}`\n"
            "- this answer streamed in small chunks: watch the next one arrive\n\n"
            "```python\n"
            f"print({text!r})\n"
            "```\n\n"
            "Try **show me the files**, **run the tests** or **loop** to see the tools."
        )
