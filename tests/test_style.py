"""All Python of the project (package, tests, book extensions, tools, benchmarks,
conf.py) is formatted by ruff in one style and its lines fit in 88 characters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).parent / "ruff"
CHECKED = ["code", "tests", "book/_ext", "tools", "benchmarks", "conf.py"]


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    assert RUFF.exists(), f"ruff is missing: `{sys.executable} -m pip install ruff`"
    return subprocess.run(
        [str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "args",
    [("format", "--check", "--diff", *CHECKED), ("check", "--no-fix", *CHECKED)],
    ids=["format", "lint"],
)
def test_ruff_finds_nothing_to_change(args):
    result = ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_checks_line_length(tmp_path):
    long_line = tmp_path / "long.py"
    long_line.write_text("x = " + "1 + " * 30 + "1\n")
    config = str(ROOT / "pyproject.toml")
    result = ruff("check", "--no-fix", "--config", config, str(long_line))
    assert result.returncode != 0
    assert "E501" in result.stdout
