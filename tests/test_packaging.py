"""The wheel carries the stylesheets and installs a working ``koroku-tui`` command."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from koroku_tui import __version__

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(600)
def test_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is needed to build the wheel (the README's set-up installs it)")
    dist = tmp_path / "dist"
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("koroku_tui-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {Path(n).name for n in names if n.startswith("koroku_tui/styles/")}
    in_repo = {p.name for p in (ROOT / "styles").glob("*.tcss")}
    assert in_repo and in_repo <= shipped

    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(python), str(wheel)],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    version = subprocess.run(
        [str(venv / "bin" / "koroku-tui"), "--version"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"koroku-tui {__version__}"
    styles = subprocess.run(
        [str(python), "-c", "from koroku_tui.ui.resources import styles_dir; print(styles_dir())"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(styles.stdout.strip()).is_relative_to(venv)
