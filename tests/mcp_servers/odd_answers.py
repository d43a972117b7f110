"""A stdio MCP server whose answers are legal but unusual, and one that is not UTF-8.

Usage: python odd_answers.py [--refuse-start]

Tools:

- ``echo``: the text back (proof the server still answers);
- ``refuse``: a JSON-RPC error of code -32000 (:data:`REFUSAL`), the first
  code of the range left to servers, which many use for any refusal, and
  which the SDK also uses for a connection it saw close;
- ``latin1``: the text ``café`` written in Latin-1 (:data:`LATIN1`): a byte
  that is not UTF-8 in the middle of its line;
- ``storm``: :data:`STORM` ``notifications/tools/list_changed`` in a row,
  then the answer ``"stormed"``;
- ``lists``: how many ``tools/list`` it has answered, as text;
- ``hang``: never answered.

It answers ``ping`` "method not found", as a server written before it knew
ping may. With ``--refuse-start`` it answers ``initialize`` with a -32000
error (:data:`START_REFUSAL`). It exits when stdin ends.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import Json, RawServer, RawTool, RpcError, echo_tool, says, text_result

REFUSAL = "no such file: notes.txt"
LATIN1 = "caf\udce9"
"""``café`` in Latin-1: the é is the lone byte 0xE9 (``raw_rpc`` writes it as it is)."""
STORM = 500
START_REFUSAL = "the database is locked"


class StartRefused(RawServer):
    """Refuses ``initialize`` with -32000, and stays."""

    def _answer(self, method: str, params: Json) -> Json | None:
        if method == "initialize":
            raise RpcError(-32000, START_REFUSAL)
        return super()._answer(method, params)


def main() -> None:
    """Serve until stdin ends."""

    def refuse(arguments: dict[str, object]) -> None:
        raise RpcError(-32000, REFUSAL)

    def storm(arguments: dict[str, object]) -> dict[str, object]:
        for _ in range(STORM):
            server.notify("notifications/tools/list_changed")
        return text_result("stormed")

    tools = [
        echo_tool(),
        RawTool("refuse", refuse, "Refuses every call."),
        RawTool("latin1", says(LATIN1), "Answers in Latin-1."),
        RawTool("storm", storm, "Says its tools changed, many times over."),
        RawTool("lists", lambda arguments: text_result(str(server.lists_served)), "Lists served."),
        RawTool("hang", lambda arguments: None, "Never answers."),
    ]
    kind = StartRefused if sys.argv[1:] == ["--refuse-start"] else RawServer
    server = kind("odd-answers", tools, list_changed=True, pings=False)
    server.serve()


if __name__ == "__main__":
    main()
