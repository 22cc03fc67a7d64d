"""Reproducible pages: seeds, thread count, and a note of what computed them.

Every chapter starts with ``transformer.setup()``. It makes two builds of a
page on the same machine, with the same versions, print the same numbers,
except the timing ratios a clock measures, and prints what produced them.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
import random
import subprocess
from pathlib import Path

import torch

from .checks.tensors import check_positive_int

_PACKAGE_DIR = Path(__file__).resolve().parent


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's (if installed) and torch's random generators.

    Args:
        seed: The seed.

    Raises:
        TypeError: If ``seed`` is not an int.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy comes with matplotlib
        return
    np.random.seed(seed)


def package_fingerprint() -> str:
    """Return the first 12 hex digits of a SHA-256 over the package's source files."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def git_commit() -> str | None:
    """Return the short commit of the checkout the package runs from, if any.

    A ``+dirty`` suffix means the working tree had uncommitted changes.
    Returns ``None`` when the package is not in a git checkout (an installed
    wheel, a downloaded notebook).
    """

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=_PACKAGE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=10", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def provenance() -> dict[str, str]:
    """Describe what is computing: package, commit, torch, Python, time (UTC)."""
    from . import __version__

    info = {
        "transformer": __version__,
        "source": package_fingerprint(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "ran": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    commit = git_commit()
    if commit:
        info["commit"] = commit
    return info


def setup(seed: int = 0, threads: int = 1, *, quiet: bool = False) -> None:
    """Prepare a chapter: seed, fix torch's thread count, set the figure style.

    One thread is the default because the numbers a CPU computes can depend
    on how a reduction is split across threads; with a fixed count, two
    builds print the same digits even when two chapters run at once (timing
    ratios, which a clock measures, still move a little).

    Args:
        seed: Seed for every random generator.
        threads: Number of threads torch may use.
        quiet: Do not print the provenance line.

    Raises:
        TypeError: If ``seed`` or ``threads`` is not an int.
        ValueError: If ``threads`` is not positive.
    """
    check_positive_int("threads", threads)
    seed_everything(seed)
    torch.set_num_threads(threads)
    from .plot.style import use_book_style

    use_book_style()
    if not quiet:
        info = provenance()
        commit = f", commit {info['commit']}" if "commit" in info else ""
        print(f"Outputs computed on {info['ran']} by transformer {info['transformer']}")
        print(
            f"(source {info['source']}{commit}), torch {info['torch']}, "
            f"Python {info['python']};"
        )
        print(f"seed {seed}, {threads} torch thread(s).")
