"""``--print`` with MCP servers, in a process of its own: the headless mode as the command runs it.

Usage: ``python print_with_mcp.py SERVERS.json WORKSPACE [--yes] [--verbose] TEXT``

``SERVERS.json`` holds ``[mcp_servers]`` as the settings take them (name ->
entry). The settings are built from the environment (``KOROKU_HOME``, the
fake's address) plus those servers, then handed to ``run_headless``, as
``cli.py`` does once the config file is read: reading ``[mcp_servers]`` from
the file is the config's own business, tested there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from koroku_tui.config.settings import Settings
from koroku_tui.modes.headless import HeadlessRequest, run_headless
from koroku_tui.privacy.logs import configure_logging


def main(argv: list[str]) -> int:
    servers_file, workspace, *flags, text = argv
    settings = Settings(mcp_servers=json.loads(Path(servers_file).read_text()))
    configure_logging(settings.home)  # as the command does: the servers' stderr goes there
    request = HeadlessRequest(
        text=text,
        workspace=Path(workspace),
        auto_approve="--yes" in flags,
        verbose="--verbose" in flags,
    )
    return run_headless(request, settings)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
