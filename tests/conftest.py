"""Shared test set-up: a fixed seed and one torch thread for every test, and
the built site for the tests that inspect it. Every test imports this
checkout's ``code/transformer`` (pyproject's ``pythonpath``, checked here)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from package_cache import check_package_source  # noqa: E402

check_package_source(ROOT / "code")


def chapters() -> list[str]:
    """Names of the book's pages that are notebooks (have a kernelspec)."""
    return sorted(
        p.stem
        for p in (ROOT / "book").glob("*.md")
        if "kernelspec:" in p.read_text().split("\n---", 1)[0]
    )


CUDA = pytest.param(
    "cuda",
    marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)"
    ),
)


@pytest.fixture(params=["cpu", CUDA])
def device(request) -> torch.device:
    """The device a test runs on: the CPU, and a CUDA GPU where there is one.

    On a machine without a GPU the ``cuda`` case is reported as skipped, with
    its reason; ``make test`` on a GPU machine runs it.
    """
    return torch.device(request.param)


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    yield
    # a test that drew figures leaves none open for the next one
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture(scope="session")
def site() -> Path:
    """Build the book exactly as a reader does (`make html`) and return _build/html.

    Chapters whose code is unchanged come from the execution cache, so this is
    quick after the first build.
    """
    result = subprocess.run(["make", "html"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    return HTML
