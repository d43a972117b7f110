"""Hostile servers' lives through the agent and the strict fake: slow, dying, noisy, stuck.

Each server is a script of ``tests/mcp_servers/`` (its docstring says how it
misbehaves), configured as a user would, called by the real agent against
the strict fake Gemini. What a test checks is what the user or the model
would see: the turn's lines, the server's status, the calls' answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.mcp_kit import serving
from helpers.mcp_servers import server_settings
from helpers.processes import kill_leftovers, wait_for_pid, wait_until_gone
from mcp_servers import crashes_mid_call, never_initializes, odd_answers
from test_mcp_agent import declarations, responses

from koroku_tui.agent.tools.mcp.connection import STDERR_GRACE
from koroku_tui.agent.tools.mcp.servers import MAX_RESTARTS
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(60)


def failed(status: object) -> bool:
    return getattr(status, "state", None) is ServerState.FAILED


async def test_a_server_that_never_initializes_is_gone_without_after_its_start_up_time(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The turn waits its ``startup_timeout_sec``, then goes on: one line, which quotes what
    the server last wrote on stderr, as its status does."""
    stuck = server_settings("never_initializes", startup_timeout_sec=2)
    fake.add(text_reply("Went on."))
    async with serving(fake, tmp_path, {"stuck": stuck}) as served:
        assert await served.agent.run_turn("hi") == "Went on."
        status = await served.until("stuck", failed)
    why = (
        "did not finish starting within 2 s; the last line on its stderr: "
        f"{never_initializes.STDERR_LINE}"
    )
    assert served.notices() == [f"Went on without the MCP server stuck: it {why}."]
    assert status.reason == f"stuck {why}."
    assert not [name for name in declarations(fake) if name.startswith("stuck__")]


async def test_a_server_that_crashes_mid_call_fails_the_call_and_is_restarted_three_times(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Each turn starts it again and it crashes again, until its three restarts are spent:
    then the turn goes on without it, and says so."""
    for _ in range(MAX_RESTARTS + 1):
        fake.add(call_reply(("crash__boom", {})), text_reply("It broke."))
    fake.add(text_reply("Without it."))
    async with serving(fake, tmp_path, {"crash": server_settings("crashes_mid_call")}) as served:
        answers = [await served.agent.run_turn("boom") for _ in range(MAX_RESTARTS + 2)]
        status = served.status("crash")
    assert answers == ["It broke."] * (MAX_RESTARTS + 1) + ["Without it."]
    crash = f"the last line on its stderr: {crashes_mid_call.STDERR_LINE}"
    for index in range(1, 2 * (MAX_RESTARTS + 1), 2):  # each turn's answer to the call
        last = responses(fake, index)[-1]  # the history holds the earlier turns' too
        assert last["response"] == {"error": f"server crash stopped during the call; {crash}."}
    assert served.notices() == [f"Went on without the MCP server crash: it stopped; {crash}."]
    assert (status.state, status.restarts) == (ServerState.FAILED, MAX_RESTARTS)
    assert "crash__boom" not in declarations(fake, -1)


@pytest.mark.parametrize("name", ["garbage_stdout", "well_behaved"])
async def test_a_server_works_whatever_else_it_writes_on_stdout(
    fake: FakeGemini, tmp_path: Path, name: str
) -> None:
    """Lines that are not its answers (text, half a JSON, answers to nothing) are passed over."""
    fake.add(call_reply(("s__echo", {"text": "through the noise"})), text_reply("Echoed."))
    async with serving(fake, tmp_path, {"s": server_settings(name)}) as served:
        assert await served.agent.run_turn("echo") == "Echoed."
        assert served.status("s").state is ServerState.READY
    [response] = responses(fake, 1)
    assert response["response"] == {"output": "through the noise"}


async def test_a_call_that_hangs_fails_at_the_tool_timeout_and_the_server_answers_on(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The stopped call makes Koroku ping the server; this one still answers pings, so it
    stays ready and its other tools answer (one that answers nothing at all is failed:
    ``test_mcp_servers.py``)."""
    hangs = server_settings("hangs_in_call", tool_timeout_sec=1)
    fake.add(
        call_reply(("slow__hang", {})),
        call_reply(("slow__echo", {"text": "still here"})),
        text_reply("One of two."),
    )
    async with serving(fake, tmp_path, {"slow": hangs}) as served:
        assert await served.agent.run_turn("try both") == "One of two."
        status = served.status("slow")
    [hung] = responses(fake, 1)
    assert hung["response"] == {"error": "slow__hang timed out after 1 s and was stopped."}
    assert responses(fake, 2)[-1]["response"] == {"output": "still here"}
    assert status.state is ServerState.READY


async def test_closing_koroku_ends_a_server_that_ignores_eof_and_its_regrouped_child(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The server ignores its stdin's end, SIGTERM, SIGHUP and SIGINT; its child left its
    process group. Closing the agent (what ctrl+q does) leaves neither running."""
    pid_file, child_file = tmp_path / "server.pid", tmp_path / "child.pid"
    args = ("--pid-file", str(pid_file), "--child-pid-file", str(child_file), "--child-regroups")
    fake.add(text_reply("Hi."))
    left: list[int] = []
    try:
        async with serving(fake, tmp_path, {"tough": server_settings("ignores_eof", *args)}) as s:
            assert await s.agent.run_turn("hi") == "Hi."
            assert s.status("tough").state is ServerState.READY
            left = [wait_for_pid(pid_file), wait_for_pid(child_file)]
        assert wait_until_gone(left) == []
    finally:
        kill_leftovers(left)


async def test_a_call_refused_with_code_32000_fails_alone_and_the_server_answers_on(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """-32000 is the SDK's "connection closed" and many servers' "refused": the server was
    taken for dead and ended (its next call "not running"), one of its 3 restarts spent."""
    fake.add(
        call_reply(("odd__refuse", {})),
        call_reply(("odd__echo", {"text": "still here"})),
        text_reply("One of two."),
    )
    async with serving(fake, tmp_path, {"odd": server_settings("odd_answers")}) as served:
        assert await served.agent.run_turn("try both") == "One of two."
        status = served.status("odd")
    [refused] = responses(fake, 1)
    assert refused["response"] == {"error": f"odd refused the call: {odd_answers.REFUSAL}"}
    assert responses(fake, 2)[-1]["response"] == {"output": "still here"}
    assert (status.state, served.notices()) == (ServerState.READY, [])


async def test_an_answer_that_is_not_utf8_is_read_with_its_bad_byte_replaced(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The SDK's reader stopped at the byte, the server did not: the call waited out its
    time limit, and so would every later one."""
    odd = server_settings("odd_answers", tool_timeout_sec=5)
    fake.add(
        call_reply(("odd__latin1", {})),
        call_reply(("odd__echo", {"text": "still here"})),
        text_reply("Read."),
    )
    async with serving(fake, tmp_path, {"odd": odd}) as served:
        assert await served.agent.run_turn("latin") == "Read."
    assert responses(fake, 1)[-1]["response"] == {"output": "caf\ufffd"}
    assert responses(fake, 2)[-1]["response"] == {"output": "still here"}


async def test_a_storm_of_new_tool_list_notices_asks_for_a_few_lists_not_one_each(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Hundreds of ``list_changed`` in a row: each had its list asked for and offered (the
    server's CPU and Koroku's, for as long as it keeps sending them)."""
    fake.add(call_reply(("odd__storm", {})), call_reply(("odd__lists", {})), text_reply("Calm."))
    async with serving(fake, tmp_path, {"odd": server_settings("odd_answers")}) as served:
        assert await served.agent.run_turn("storm") == "Calm."
        assert served.status("odd").state is ServerState.READY
    assert responses(fake, 1)[-1]["response"] == {"output": "stormed"}
    lists = int(responses(fake, 2)[-1]["response"]["output"])
    assert lists <= 3, f"{lists} tool lists for {odd_answers.STORM} notices"  # its first, two more


async def test_a_server_that_refuses_ping_stays_after_a_call_that_timed_out(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The ping after a stopped call is answered "method not found": an answer. It was
    taken for silence and the server ended (a second after, when its stderr did not end:
    the next step comes later than that)."""
    odd = server_settings("odd_answers", tool_timeout_sec=1)
    fake.add(
        call_reply(("odd__hang", {})),
        call_reply(("odd__echo", {"text": "still here"}), delay=STDERR_GRACE + 1),
        text_reply("One of two."),
    )
    async with serving(fake, tmp_path, {"odd": odd}) as served:
        assert await served.agent.run_turn("try both") == "One of two."
        status = served.status("odd")
    assert responses(fake, 1)[-1]["response"] == {
        "error": "odd__hang timed out after 1 s and was stopped."
    }
    assert responses(fake, 2)[-1]["response"] == {"output": "still here"}
    assert status.state is ServerState.READY


async def test_a_server_that_refuses_to_start_with_code_32000_is_quoted(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Its refusal read as the SDK's "connection closed": "it ended before it was ready"."""
    fake.add(text_reply("Without it."))
    refusing = server_settings("odd_answers", "--refuse-start")
    async with serving(fake, tmp_path, {"odd": refusing}) as served:
        assert await served.agent.run_turn("hi") == "Without it."
    why = f"it refused to start: {odd_answers.START_REFUSAL}"
    assert served.notices() == [f"Went on without the MCP server odd: {why}."]
