"""Offer every chapter as an executed ``.ipynb`` in the page's download menu.

sphinx-book-theme lists a ``.ipynb`` download for a MyST-markdown page only
when launch buttons are configured. Without them, this extension copies the
notebook that myst-nb executed (``<build>/jupyter_execute/<page>.ipynb``) to
``_sources/<page>.ipynb`` and sets the page's ``ipynb_source``, which is what
the theme's download menu reads. The copy keeps the outputs and drops
metadata that could name a folder of the machine that built it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from sphinx.application import Sphinx

OUTPUT_FOLDER = "jupyter_execute"
KEEP_NOTEBOOK_METADATA = ("kernelspec", "language_info", "jupytext")


def clean_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Keep only the notebook metadata a reader needs; drop per-machine data."""
    nb.metadata = nbformat.NotebookNode(
        {k: v for k, v in nb.metadata.items() if k in KEEP_NOTEBOOK_METADATA}
    )
    nb.metadata.get("jupytext", {}).pop("notebook_metadata_filter", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def _on_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is None or not context.get("sourcename", "").endswith((".md", ".md.txt")):
        return
    executed = Path(app.outdir).parent / OUTPUT_FOLDER / f"{pagename}.ipynb"
    if not executed.is_file():
        return
    nb = clean_notebook(nbformat.read(executed, as_version=4))
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app: Sphinx) -> dict:
    # Before sphinx-book-theme builds its header buttons (priority 501).
    app.connect("html-page-context", _on_page_context, priority=450)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
