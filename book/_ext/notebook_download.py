"""Offer every chapter as a stand-alone notebook, and all of them as one archive.

At the end of an HTML build this extension

1. builds the package's wheel (``notebook_archive.build_wheel``) and publishes
   it as ``_downloads/<wheel>``, where the notebooks' set-up cell finds it;
2. writes each chapter's stand-alone notebook (``standalone_notebook``) to
   ``<build>/notebooks/<page>.ipynb`` and to ``_sources/<page>.ipynb``;
3. adds the wheel, a ``requirements.txt`` and a ``README.md`` to
   ``<build>/notebooks/`` and zips that folder into
   ``_downloads/executable-transformer-notebooks.zip``.

A chapter is a page that myst-nb executed (``<build>/jupyter_execute/<page>.ipynb``).
sphinx-book-theme lists a ``.ipynb`` download for a MyST-markdown page only
when launch buttons are configured; without them, an ``html-page-context``
hook sets the page's ``ipynb_source``, which the theme's download menu reads.

Everything is written in the main process once all pages are written
(``build-finished``), so the extension is safe for parallel builds.

Configuration (``conf.py``):
    notebook_book_url: address of the hosted book.
    notebook_repository_url: address of the git repository.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.util import logging

from book_links import BookLinks, title_markdown
from notebook_archive import (
    archive_readme,
    archive_requirements,
    build_wheel,
    partial_file,
    write_archive,
)
from standalone_notebook import setup_cell_source, standalone_notebook

logger = logging.getLogger(__name__)

EXECUTED_FOLDER = "jupyter_execute"
NOTEBOOK_FOLDER = "notebooks"
ARCHIVE = "executable-transformer-notebooks.zip"


def executed_notebook(app: Sphinx, docname: str) -> Path:
    """Return where myst-nb writes the executed notebook of a page."""
    return Path(app.outdir).parent / EXECUTED_FOLDER / f"{docname}.ipynb"


def executed_outputs(app: Sphinx, docname: str) -> nbformat.NotebookNode:
    """Return the executed notebook of a page, with its outputs.

    In cache mode myst-nb writes ``jupyter_execute/<page>.ipynb`` without
    outputs when they came from the cache (it writes the notebook it read,
    not the one it merged the cached outputs into), so take them from
    jupyter-cache, as the page did.
    """
    written = nbformat.read(executed_notebook(app, docname), as_version=4)
    if app.config.nb_execution_mode != "cache":
        return written
    try:
        return get_cache(app.config.nb_execution_cache_path).merge_match_into_notebook(written)[1]
    except KeyError:  # not executed (nb_execution_excludepatterns)
        return written


def chapters(app: Sphinx) -> list[str]:
    """Return the pages that are notebooks (myst-nb executed them), in reading order."""
    order = {doc: i for i, doc in enumerate(app.env.toctree_includes.get(app.config.root_doc, []))}
    found = [doc for doc in app.env.found_docs if executed_notebook(app, doc).is_file()]
    return sorted(found, key=lambda doc: (order.get(doc, len(order)), doc))


def _on_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is not None and executed_notebook(app, pagename).is_file():
        context["ipynb_source"] = f"{pagename}.ipynb"


def _put(source: Path, target: Path) -> None:
    """Copy a file into place so that no reader sees half of it."""
    partial = partial_file(target)
    shutil.copyfile(source, partial)
    partial.replace(target)


def _replace_folder(new: Path, folder: Path) -> None:
    """Put the folder ``new`` in the place of ``folder``, even if another build races us."""
    old = new.with_name(f"{new.name}-old")
    for _ in range(5):
        try:
            if folder.exists():
                folder.rename(old)
            new.rename(folder)
            break
        except OSError:  # another build swapped its folder in meanwhile
            continue
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(new, ignore_errors=True)


def _stage(app: Sphinx, staging: Path) -> list[tuple[str, str]]:
    """Write the wheel, the notebooks, requirements and README into ``staging``.

    Returns the ``(notebook, title)`` of every chapter written.
    """
    config = app.config
    wheel = build_wheel(Path(app.confdir), staging, skip=(Path(app.outdir).parent,))
    setup = setup_cell_source(
        book_url=config.notebook_book_url,
        repository_url=config.notebook_repository_url,
        wheel=wheel.name,
    )
    listing = []
    for docname in chapters(app):
        links = BookLinks(app, docname, config.notebook_book_url)
        try:
            notebook = standalone_notebook(
                Path(app.env.doc2path(docname)), executed_outputs(app, docname), links, setup
            )
        except ValueError as error:
            logger.warning("notebook: %s", error, location=docname, type="notebook")
            continue
        path = staging / f"{docname}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
        listing.append((f"{docname}.ipynb", title_markdown(app.env.titles[docname])))
    (staging / "requirements.txt").write_text(
        archive_requirements(wheel, Path(app.confdir) / "requirements.txt")
    )
    (staging / "README.md").write_text(
        archive_readme(
            title=config.project,
            book_url=config.notebook_book_url,
            repository_url=config.notebook_repository_url,
            chapters=listing,
            wheel=wheel.name,
        )
    )
    return listing


def _publish(app: Sphinx) -> None:
    outdir, build = Path(app.outdir), Path(app.outdir).parent
    # Everything is written to a new folder first: another build (make chapter,
    # a second make html) may be publishing into the same build folder.
    staging = Path(tempfile.mkdtemp(dir=build, prefix=f".{NOTEBOOK_FOLDER}-"))
    staging.chmod(0o755)
    try:
        listing = _stage(app, staging)
        for name, _ in listing:
            _put(staging / name, outdir / "_sources" / name)
        downloads = outdir / "_downloads"
        for wheel in staging.glob("*.whl"):
            _put(wheel, downloads / wheel.name)
            for old in downloads.glob("*.whl"):
                if old.name != wheel.name:
                    old.unlink(missing_ok=True)
        write_archive(staging, downloads / ARCHIVE)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _replace_folder(staging, build / NOTEBOOK_FOLDER)
    logger.info(
        "notebooks: %d chapters in %s/ and _downloads/%s", len(listing), NOTEBOOK_FOLDER, ARCHIVE
    )


def _on_config_inited(app: Sphinx, config: Config) -> None:
    for name in ("notebook_book_url", "notebook_repository_url"):
        if not config[name].startswith("https://"):
            raise ConfigError(f"{name} must be an https:// address (set it in conf.py)")


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _publish(app)


def setup(app: Sphinx) -> dict:
    app.add_config_value("notebook_book_url", "", "html", str)
    app.add_config_value("notebook_repository_url", "", "html", str)
    # Before sphinx-book-theme builds its header buttons (priority 501).
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", _on_page_context, priority=450)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
