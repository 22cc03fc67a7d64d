"""A tiny copy of the book for the tests of the build (not a test file itself).

:func:`make_book` writes a project with the real ``conf.py``, extensions and
package but chapters of the test's own, and :func:`build` builds it as
``make html`` does (strict, two parallel workers).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
{extra}---

# {title}

"""

# Printed by a chapter's cell: a new value each time the cell really runs.
RUN_ID = 'import uuid\nprint("run id:", uuid.uuid4().hex)'


def chapter(title: str, *cells: str, front_matter: str = "") -> str:
    """Return a MyST chapter with one code cell per string in ``cells``.

    A cell's options (``:tags: [...]``) go on its first lines.
    """
    text = FRONT_MATTER.format(extra=front_matter, title=title)
    return text + "".join(
        f"```{{code-cell}} ipython3\n{cell.strip()}\n```\n\n" for cell in cells
    )


def make_book(root: Path, chapters: dict[str, str]) -> Path:
    """Write a project at ``root`` whose book is ``chapters`` (name: text); return
    ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ["conf.py", "pyproject.toml", "requirements.txt", "README.md"]:
        shutil.copy2(ROOT / name, root / name)
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ["_ext", "_static"]:
        shutil.copytree(ROOT / "book" / folder, root / "book" / folder, ignore=ignore)
    shutil.copytree(
        ROOT / "code" / "transformer", root / "code" / "transformer", ignore=ignore
    )
    write_chapters(root, chapters)
    return root


def write_chapters(root: Path, chapters: dict[str, str]) -> None:
    """Add ``chapters`` to the book at ``root`` and list them all in its index."""
    for name, text in chapters.items():
        (root / "book" / f"{name}.md").write_text(text)
    names = sorted(p.stem for p in (root / "book").glob("*.md") if p.stem != "index")
    toctree = "\n".join(names)
    (root / "book" / "index.md").write_text(
        f"# Index\n\n```{{toctree}}\n{toctree}\n```\n"
    )


KERNEL_PORT_CLASH = "ZMQError: Address already in use"
"""What a kernel prints when another kernel took its port first."""


def build(
    root: Path,
    *,
    out: Path | None = None,
    env: dict | None = None,
    check: bool = True,
    strict: bool = True,
) -> subprocess.CompletedProcess:
    """Build the book at ``root`` into ``out`` (default ``root/_build/html``).

    As `make html` does: ``-n -W --keep-going`` (``-W`` only if ``strict``),
    two parallel workers. The execution cache goes in ``out.parent/.jupyter_cache``.
    With ``check``, assert that the build succeeded. Output is in ``.stdout``
    (stderr merged into it, as a terminal shows both). A build whose kernel
    lost a port race (:data:`KERNEL_PORT_CLASH`) is run once more.
    """
    out = out or root / "_build" / "html"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        str(root / "book"),
        str(out),
    ]
    command += [
        "-d",
        str(out / ".doctrees"),
        "-c",
        str(root),
        "-n",
        "--keep-going",
        "-j",
        "2",
    ]
    command += ["-W"] if strict else []
    for _ in range(2):
        result = subprocess.run(
            command, capture_output=True, text=True, env={**os.environ, **(env or {})}
        )
        result.stdout += result.stderr
        # Two kernels started at once can draw the same free TCP port; the loser
        # dies before running a cell. That is the machine's luck, not the build's:
        # build once more (finished chapters come from the cache).
        if KERNEL_PORT_CLASH not in result.stdout:
            break
    if check:
        assert result.returncode == 0, result.stdout[-6000:]
    return result


def run_ids(html: Path, names: list[str]) -> dict[str, str]:
    """Return the run id each chapter printed (see :data:`RUN_ID`)."""
    pages = {name: (html / f"{name}.html").read_text() for name in names}
    return {
        name: re.search(r"run id: ([0-9a-f]{32})", page).group(1)
        for name, page in pages.items()
    }
