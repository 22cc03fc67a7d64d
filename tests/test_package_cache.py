"""A change to code/transformer/ must re-execute the chapters on the next build.

This builds a two-chapter copy of the book in a temporary folder, with the
real conf.py and extensions and a copy of the package, in parallel (-j 2) as
`make html` does: once, again unchanged (outputs come from the cache), and
after a one-line change to the package (the chapters run again, into a fresh
cache that both parallel workers share).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Probe

```{code-cell} ipython3
import uuid
print("run id:", uuid.uuid4().hex)  # NAME
```
"""


PROBES = ["probe_a", "probe_b"]


def _build(project: Path) -> dict[str, str]:
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(project / "book"),
           str(project / "_build"), "-c", str(project), "-n", "-W", "--keep-going", "-q",
           "-j", "2"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    pages = {name: (project / "_build" / "html" / f"{name}.html").read_text() for name in PROBES}
    return {name: re.search(r"run id: ([0-9a-f]{32})", page).group(1)
            for name, page in pages.items()}


def test_package_change_reexecutes_chapters(tmp_path):
    # A project the extensions accept: the notebook archive builds its wheel.
    for name in ["conf.py", "pyproject.toml", "requirements.txt", "README.md"]:
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ["_ext", "_static"]:
        shutil.copytree(ROOT / "book" / folder, tmp_path / "book" / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "code" / "transformer", tmp_path / "code" / "transformer",
                    ignore=shutil.ignore_patterns("__pycache__"))
    toctree = "\n".join(PROBES)
    (tmp_path / "book" / "index.md").write_text(f"# Index\n\n```{{toctree}}\n{toctree}\n```\n")
    for name in PROBES:
        # Distinct code: jupyter-cache keys chapters on their code cells.
        (tmp_path / "book" / f"{name}.md").write_text(CHAPTER.replace("NAME", name))

    first = _build(tmp_path)
    assert _build(tmp_path) == first, "an unchanged book must reuse the cached outputs"

    module = tmp_path / "code" / "transformer" / "masks.py"
    module.write_text(module.read_text() + "# a one-line change\n")
    third = _build(tmp_path)
    for name in PROBES:
        assert third[name] != first[name], f"{name} was not re-executed after the package changed"

    caches = list((tmp_path / "_build" / ".jupyter_cache").iterdir())
    assert len(caches) == 1, "the stale execution cache was not removed"
    assert _build(tmp_path) == third
