"""Re-execute the chapters whenever the package they import changes.

jupyter-cache keys a notebook on its code cells only, so myst-nb is pointed at
a cache folder named after a hash of the package (``package_cache_watch``). The
last ``package_cache_keep`` states keep their folders, so an edit and its revert
run the chapters once; a build locks its folder, so two builds at two package
states never delete each other's. The hash is also an "env" config value: a
change re-reads every page, which an unchanged ``.md`` would otherwise not be.
A chapter that trains on the pages (calls ``book_chapters()``) gets a hidden cell
holding their hash, so that an edit of any page re-runs it.
"""

import fcntl
import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

from jupyter_cache import get_cache
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)

CACHE_ROOT = ".jupyter_cache"
LOCK = "in-use.lock"
READER = "book_chapters()"  # in a chapter that trains on the book's pages
HASH_CELL = "\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n# pages' hash %s\n```\n"


def package_hash(folder: Path) -> str:
    """Return a SHA-256 over the names and bytes of every file in ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def check_package_source(code: Path) -> None:
    """Raise RuntimeError unless ``import transformer`` gives ``code/transformer``."""
    spec = importlib.util.find_spec("transformer")  # found, not run: torch takes 1.5 s
    found = Path(spec.origin).resolve().parent if spec and spec.origin else None
    if found != (code / "transformer").resolve():
        raise RuntimeError(
            f"imported transformer from {found}, not from this checkout's "
            f"{code}/transformer. Another installation shadows it: unset PYTHONPATH "
            "and VIRTUAL_ENV, then run `make setup` in this checkout."
        )


def _lock(cache: Path, mode: int):
    """Return ``cache``'s lock file locked in ``mode``; None if another build has it."""
    handle = open(cache / LOCK, "a")
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
        return handle
    except BlockingIOError:
        handle.close()


def prune(root: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used states in ``root`` (execution
    caches, or wheels), skipping those in use and those still being made (``.name``)."""
    states = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    states.sort(key=lambda p: p.stat().st_mtime)
    for old in states[: max(len(states) - keep, 0)]:
        if (handle := _lock(old, fcntl.LOCK_EX)) is not None:
            logger.info("removing %s/%s, an older package state", root.name, old.name)
            shutil.rmtree(old)
            handle.close()


def _add_text_hash(app: Sphinx, docname: str, source: list[str]) -> None:
    if READER in source[0]:
        source[0] += HASH_CELL % app.book_text_hash


def _readers_outdated(app: Sphinx, env, *_) -> list[str]:
    known, env.book_text_hash = getattr(env, "book_text_hash", ""), app.book_text_hash
    pages = {d: Path(env.doc2path(d)).read_text() for d in env.found_docs}
    return [d for d, t in pages.items() if READER in t and known != app.book_text_hash]


def _on_config_inited(app: Sphinx, config: Config) -> None:
    folder = Path(app.confdir, config.package_cache_watch)
    if not folder.is_dir():
        raise ConfigError(f"package_cache_watch: no folder {folder}")
    config.package_cache_hash = key = package_hash(folder)[:16]
    pages = b"\0".join(p.read_bytes() for p in sorted(Path(app.srcdir).glob("*.md")))
    app.book_text_hash = hashlib.sha256(pages).hexdigest()[:16]
    root = Path(config.package_cache_root or Path(app.outdir).parent / CACHE_ROOT)
    (cache := root / key).mkdir(parents=True, exist_ok=True)
    # Held (shared) until this process ends; parallel workers inherit it.
    app.package_cache_lock = _lock(cache, fcntl.LOCK_SH)
    os.utime(cache)  # most recently used
    prune(root, config.package_cache_keep)
    config.nb_execution_cache_path = str(cache)
    # Create the database here, in the main process: parallel workers that find
    # none race to create it, and query it before its tables exist (no nbcache).
    get_cache(str(cache)).list_cache_records()
    logger.info("package hash %s: execution cache %s/%s", key, CACHE_ROOT, key)


def setup(app: Sphinx) -> dict:
    app.add_config_value("package_cache_watch", "code/transformer", "env", str)
    app.add_config_value("package_cache_keep", 4, "", int)
    # "": .jupyter_cache beside the output; `make pdf` gives the site's (no re-runs)
    app.add_config_value("package_cache_root", "", "", str)
    app.add_config_value("package_cache_hash", "", "env", str)
    app.connect("config-inited", _on_config_inited, priority=900)
    app.connect("source-read", _add_text_hash)
    app.connect("env-get-outdated", _readers_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
