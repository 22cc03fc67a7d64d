"""The package's wheel, built once per package state, and the zip of all notebooks.

:func:`cached_wheel` keeps one wheel per package fingerprint (the SHA-256 of
``package_cache.package_hash`` over ``code/transformer``, with a digest of
``pyproject.toml``) in a cache folder; a build at a known state only looks it
up. A new state is built offline (``pip wheel --no-build-isolation
--no-index``) from a copy of ``pyproject.toml``, ``README.md`` and the package,
so nothing appears in the checkout. The newest few states are kept.

:func:`write_archive` zips a folder holding the notebooks, that wheel, a
``requirements.txt`` and a ``README.md``: all a reader needs to run the book
on a machine that never sees the site.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

from package_cache import package_hash

KEEP_STATES = 4
PIP_WHEEL = ("-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--disable-pip-version-check", "--quiet")  # offline, with this environment's setuptools
JUPYTER_REQUIREMENTS = ("ipykernel",)  # besides the wheel's own dependencies


def cached_wheel(root: Path, package: Path, cache: Path) -> Path:
    """Return the wheel of the project at ``root`` in its current state, building it if new.

    Args:
        root: Folder with ``pyproject.toml`` and ``README.md``.
        package: The package's folder, whose fingerprint keys the cache.
        cache: Folder of the cached wheels, one sub-folder per state.

    Raises:
        RuntimeError: If pip cannot build the wheel.
    """
    pyproject = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    folder = cache / f"{package_hash(package)[:16]}-{pyproject[:8]}"
    if not folder.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
            source, dist = Path(tmp, "project"), Path(tmp, "dist")
            shutil.copytree(package, source / package.relative_to(root),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            for name in ("pyproject.toml", "README.md"):
                shutil.copyfile(root / name, source / name)
            command = [sys.executable, *PIP_WHEEL, "--wheel-dir", str(dist), str(source)]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0 or len(list(dist.glob("*.whl"))) != 1:
                raise RuntimeError(f"pip wheel failed (is setuptools installed?):\n{result.stderr}")
            try:
                dist.rename(folder)
            except OSError:  # a concurrent build at the same state was first
                pass
    os.utime(folder)
    states = [p for p in cache.iterdir() if not p.name.startswith(".")]  # not builds under way
    for old in sorted(states, key=lambda p: p.stat().st_mtime)[:-KEEP_STATES]:
        shutil.rmtree(old, ignore_errors=True)
    return next(folder.glob("*.whl"))


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    """Return the ``METADATA`` headers of a wheel, each as a list of values."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(name).decode())
    return {key: message.get_all(key, []) for key in set(message.keys())}


def requires_python(wheel: Path) -> tuple[int, int]:
    """Return the oldest Python the wheel supports (its ``Requires-Python: >=X.Y``)."""
    found = re.search(r">=\s*(\d+)\.(\d+)", "".join(wheel_metadata(wheel).get("Requires-Python", [])))
    return (int(found[1]), int(found[2])) if found else (3, 0)


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match[1]).lower() if match else ""


def archive_requirements(wheel: Path, project_requirements: Path) -> str:
    """Return the archive's ``requirements.txt``: the wheel, its dependencies, Jupyter's kernel.

    A dependency that the project's ``requirements.txt`` pins keeps that pin, so
    the notebooks run with the versions that computed their outputs.
    """
    pinned = {
        _name(line): line.split("#", 1)[0].strip()
        for line in project_requirements.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    }
    wanted = [r.split(";", 1)[0] for r in wheel_metadata(wheel).get("Requires-Dist", [])]
    lines = [pinned.get(_name(r), r.strip()) for r in [*wanted, *JUPYTER_REQUIREMENTS]]
    return (
        "# What the notebooks need; README.md says how to install it (CPU-only torch).\n"
        + "\n".join([*lines, f"./{wheel.name}"])
        + "\n"
    )


def write_archive(folder: Path, target: Path) -> Path:
    """Zip ``folder`` into ``target``, under a top folder named like the zip."""
    partial = partial_file(target)
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, Path(target.stem) / path.relative_to(folder))
    partial.replace(target)
    return target


def partial_file(target: Path) -> Path:
    """Return a new file beside ``target``, to write and then rename over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
    os.close(handle)
    os.chmod(name, 0o644)  # mkstemp's 0600 would hide the file from a web server
    return Path(name)
