"""A command cannot take the key from Koroku's own process, nor from a variable with another name.

The real ``koroku-tui --print --yes`` runs against the fake with a realistic
key; the command reads ``/proc/$PPID/environ`` (Koroku's start-up
environment as the kernel shows it), or ``env`` with the key copied into
other variables.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.processes import KOROKU, koroku_env
from helpers.secrets_kit import LIVE_KEY
from hostile.secret_leaks import KEY_ALIASES

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

OTHER_CREDENTIALS = {
    "GOOGLE_GENAI_ACCESS_TOKEN": "ya29.an-access-token-for-the-tests",
    "GOOGLE_GENAI_DEFAULT_HEADERS": json.dumps({"Authorization": "Bearer header-token-0123456789"}),
}


def run_print(
    fake: FakeGemini, tmp_path: Path, command: str, extra: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Koroku runs ``command`` once; returns the run and the command's output as sent."""
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    fake.api_key = LIVE_KEY
    fake.add(call_reply(("run_command", {"command": command})), text_reply("Done."))
    done = subprocess.run(
        [KOROKU, "--yes", "--print", "look around"],
        env=koroku_env(fake, tmp_path / "home", key=LIVE_KEY) | extra,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    response = fake.generate_requests[1].contents[-1]["parts"][0]["functionResponse"]
    output: str = response["response"]["output"]
    return done, output


def test_a_command_cannot_read_the_key_from_korokus_start_up_environment(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # base64: a transformed copy the redaction of the output could not catch.
    _, output = run_print(
        fake,
        tmp_path,
        "base64 -w0 < /proc/$PPID/environ; echo; echo read=$?",
        OTHER_CREDENTIALS | {"KOROKU_PROBE": "visible"},
    )
    encoded, status = output.split("--- stdout ---\n", 1)[1].split("\n")[:2]
    if status == "read=0":  # as root; another user's command is refused (see the next test)
        environ = base64.b64decode(encoded)
        assert b"KOROKU_PROBE=visible" in environ  # it really is Koroku's environment
        for secret in [LIVE_KEY, "an-access-token-for-the-tests", "header-token-0123456789"]:
            assert secret.encode() not in environ
    else:
        assert "Permission denied" in output


PROTECTED = textwrap.dedent(
    """
    import os, sys
    from koroku_tui.cli import _protect_credentials
    from koroku_tui.agent.wire.client import has_credentials, make_client
    from koroku_tui.privacy.process_privacy import is_inspectable

    _protect_credentials()
    print(is_inspectable(), "GEMINI_API_KEY" in os.environ, has_credentials())
    print(make_client(base_url="http://127.0.0.1:9")._api_client.api_key)
    with open("/proc/self/environ", "rb") as environ:
        print(sys.argv[1].encode() in environ.read())
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux's")
def test_start_up_withdraws_the_key_and_closes_the_process_to_inspection() -> None:
    environ = {"GEMINI_API_KEY": LIVE_KEY, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", PROTECTED, LIVE_KEY],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # Not dumpable: another process of the same (non-root) user cannot read
    # /proc/<pid>/environ, mem or maps. The key left os.environ, yet the
    # client still gets it, and the start-up block no longer shows it.
    assert done.stdout.split("\n") == ["False False True", LIVE_KEY, "False", ""]


def test_a_variable_holding_the_key_does_not_reach_a_command_even_if_allowed(
    fake: FakeGemini, tmp_path: Path
) -> None:
    aliases = {name: LIVE_KEY for name in KEY_ALIASES}
    aliases["KOROKU_PROBE_URL"] = f"https://example.invalid/?key={LIVE_KEY}"
    allow = {"KOROKU_TOOL_ENV_ALLOW": ",".join(KEY_ALIASES)}
    _, output = run_print(fake, tmp_path, "env", aliases | allow | {"KOROKU_PROBE": "visible"})
    assert "KOROKU_PROBE=visible" in output
    for name in KEY_ALIASES:
        assert f"{name}=" not in output  # not even as NAME=[redacted]
