"""The package's wheel and the "download all" archive of the book's notebooks.

:func:`build_wheel` builds the ``transformer`` package into a wheel without
the network (``pip wheel --no-build-isolation --no-index``, using the
setuptools of the running environment). It builds from a copy of the project,
so no ``build/`` or ``*.egg-info`` folder appears in the checkout.

:func:`write_archive` zips a folder that holds the notebooks, that wheel, a
``requirements.txt`` and a ``README.md``: everything needed to run the whole
book on a machine that never sees the site.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

# Never copied into the wheel's build folder: version control, environments,
# caches and earlier build output.
SKIPPED_NAMES = re.compile(r"^(\..*|__pycache__|.*\.egg-info|build|dist|node_modules)$")
# Offline, from the running environment's setuptools, without dependencies.
PIP_WHEEL = ("-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--disable-pip-version-check", "--quiet")
# The archive pins a dependency to the version in the project's requirements.txt,
# and asks for these too, to run the notebooks in Jupyter.
JUPYTER_REQUIREMENTS = ("ipykernel",)


def _requirement_name(line: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def build_wheel(project: Path, destination: Path, *, skip: tuple[Path, ...] = ()) -> Path:
    """Build the project's wheel into ``destination`` and return its path.

    Args:
        project: Folder with ``pyproject.toml``.
        destination: Folder for the wheel (created if missing).
        skip: Folders of the project not to copy (the Sphinx build folder).

    Raises:
        RuntimeError: If pip cannot build the wheel.
    """
    skipped = {path.resolve() for path in skip}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {
            name
            for name in names
            if SKIPPED_NAMES.match(name)
            or (Path(folder) / name).resolve() in skipped
            or (Path(folder) / name / "pyvenv.cfg").is_file()
        }

    destination.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheel-") as tmp:
        source = Path(tmp) / "project"
        shutil.copytree(project, source, ignore=ignore, symlinks=True)
        dist = Path(tmp) / "dist"
        command = [sys.executable, *PIP_WHEEL, "--wheel-dir", str(dist), str(source)]
        result = subprocess.run(command, capture_output=True, text=True)
        wheels = sorted(dist.glob("*.whl"))
        if result.returncode != 0 or len(wheels) != 1:
            raise RuntimeError(f"pip wheel failed (is setuptools installed?):\n{result.stderr}")
        target = destination / wheels[0].name
        shutil.copyfile(wheels[0], target)
    return target


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    """Return the ``METADATA`` headers of a wheel, each as a list of values."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(name).decode())
    return {key: message.get_all(key, []) for key in set(message.keys())}


def archive_requirements(wheel: Path, project_requirements: Path) -> str:
    """Return the archive's ``requirements.txt``: the wheel, its dependencies and Jupyter's kernel.

    A dependency that the project's ``requirements.txt`` pins keeps that pin, so
    the notebooks run with the versions that computed their outputs.
    """
    pinned = {}
    if project_requirements.is_file():
        for line in project_requirements.read_text().splitlines():
            if line.strip() and not line.lstrip().startswith(("#", "-")):
                pinned[_requirement_name(line)] = line.split("#", 1)[0].strip()
    wanted = [r.split(";", 1)[0].strip() for r in wheel_metadata(wheel).get("Requires-Dist", [])]
    wanted += [pinned.get(name, name) for name in JUPYTER_REQUIREMENTS]
    lines = [pinned.get(_requirement_name(r), r) for r in wanted]
    return (
        "# What the notebooks need: pip install -r requirements.txt (from this folder).\n"
        "# For a CPU-only torch add: --extra-index-url https://download.pytorch.org/whl/cpu\n"
        + "\n".join([*lines, f"./{wheel.name}"])
        + "\n"
    )


def archive_readme(
    *, title: str, book_url: str, repository_url: str, chapters: list[tuple[str, str]], wheel: str
) -> str:
    """Return the archive's ``README.md``.

    Args:
        title: The book's title.
        book_url: Address of the hosted book.
        repository_url: Address of the source repository.
        chapters: ``(file name, title)`` of every notebook, in reading order.
        wheel: File name of the package's wheel.
    """
    listing = "\n".join(f"- `{name}`: {chapter}" for name, chapter in chapters)
    return f"""# {title}: the notebooks

Every chapter of [{title}]({book_url}) as a Jupyter notebook, with the outputs
computed when the book was built, and the package the chapters import.

## Run them

With Python 3.11 or newer, from this folder:

```bash
python -m venv .venv && . .venv/bin/activate
pip install -r requirements.txt   # the package ({wheel}), what it needs, ipykernel
pip install jupyterlab            # if you have no Jupyter yet
jupyter lab
```

Installing the requirements is the only step that needs the network (or a
package mirror). After that nothing is downloaded: the notebooks need no
network, and the first cell of each one installs the `transformer` package
from `{wheel}` in this folder only if it is not importable already.

In Colab or another Jupyter, open a notebook on its own: its first cell then
installs the package from the book's site or from {repository_url}.

## Contents

{listing}
- `{wheel}`: the `transformer` package
- `requirements.txt`: what the notebooks import

The source of the book and of the package: {repository_url}
"""


def partial_file(target: Path) -> Path:
    """Return a new file beside ``target``, to write and then rename over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
    os.close(handle)
    os.chmod(name, 0o644)  # mkstemp's 0600 would hide the file from a web server
    return Path(name)


def write_archive(folder: Path, target: Path) -> Path:
    """Zip ``folder`` into ``target``, under a top folder named like the zip."""
    partial = partial_file(target)
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, Path(target.stem) / path.relative_to(folder))
    partial.replace(target)
    return target
