"""Re-execute the chapters whenever the package they import changes.

jupyter-cache keys a notebook on its code cells only, so a chapter whose text
is unchanged would keep showing outputs computed with an older package. This
extension hashes every file of the watched package and

* points myst-nb at a jupyter-cache folder named after that hash, so a new
  package version starts from an empty cache (stale folders are removed),
  and creates that cache before parallel workers start;
* records the hash as a config value that Sphinx compares with the one
  pickled in its environment, so a change makes Sphinx re-read every page
  (an unchanged ``.md`` would otherwise not even be parsed again).

Configuration (``conf.py``):
    package_cache_watch: folder of the package, relative to ``conf.py``.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from jupyter_cache import get_cache
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

logger = logging.getLogger(__name__)

CACHE_ROOT = ".jupyter_cache"


def package_hash(folder: Path) -> str:
    """Return a SHA-256 over the names and bytes of every file in ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _on_config_inited(app: Sphinx, config: Config) -> None:
    folder = Path(app.confdir, config.package_cache_watch)
    if not folder.is_dir():
        raise RuntimeError(f"package_cache_watch: no folder {config.package_cache_watch!r}")
    key = package_hash(folder)[:16]
    config.package_cache_hash = key
    root = Path(app.outdir).parent / CACHE_ROOT
    cache = root / key
    if root.is_dir():
        for old in root.iterdir():
            if old.is_dir() and old.name != key:
                logger.info("package changed: removing stale execution cache %s", old.name)
                shutil.rmtree(old)
    config.nb_execution_cache_path = str(cache)
    # Create the cache's database here, in the main process. With parallel
    # reading (-j), workers that find no database race to create one, and a
    # worker can query it before its tables exist ("no such table: nbcache").
    get_cache(str(cache)).list_cache_records()
    logger.info("package hash %s: execution cache %s/%s", key, CACHE_ROOT, key)


def setup(app: Sphinx) -> dict:
    app.add_config_value("package_cache_watch", "code/transformer", "env", str)
    # Rebuild "env": when the hash differs from the pickled one, every page is re-read.
    app.add_config_value("package_cache_hash", "", "env", str)
    app.connect("config-inited", _on_config_inited, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
