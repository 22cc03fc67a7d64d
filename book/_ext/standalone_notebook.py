"""Build a chapter's stand-alone notebook, one that runs in plain Jupyter and Colab.

The notebook is jupytext's reading of the chapter's source, with

* a first code cell that installs the ``transformer`` package when it is not
  importable (:func:`setup_cell_source`);
* its Markdown cells rewritten by :class:`myst_markdown.MarkdownConverter`;
* the outputs of the notebook myst-nb executed for the page, so the download
  shows what the page shows;
* the page's display tags (``hide-input``, ...) also written as the
  ``jupyter`` cell metadata that JupyterLab and Notebook 7 act on;
* deterministic cell ids and no metadata that could name a folder of the
  machine that built it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jupytext
import nbformat

from myst_markdown import MarkdownConverter, Resolver

KEEP_NOTEBOOK_METADATA = ("kernelspec", "language_info", "jupytext")
HIDDEN_BY_TAG = {
    "hide-input": ("source_hidden",),
    "remove-input": ("source_hidden",),
    "hide-output": ("outputs_hidden",),
    "remove-output": ("outputs_hidden",),
    "hide-cell": ("source_hidden", "outputs_hidden"),
    "remove-cell": ("source_hidden", "outputs_hidden"),
}

SETUP_TEMPLATE = """\
# Set-up: install this book's `transformer` package unless it is already importable.
import glob, importlib.util, subprocess, sys

if importlib.util.find_spec("transformer") is None:
    book = {book_url}
    sources = [
        *glob.glob({wheel_glob}),  # beside this notebook (the book's zip)
        book + {wheel_path},  # the book's site
        {git_url},  # the repository
    ]
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    if not any(subprocess.run(pip + [source]).returncode == 0 for source in sources):
        raise RuntimeError(f"Could not install transformer; see {{book}}")
    importlib.invalidate_caches()"""


def setup_cell_source(*, book_url: str, repository_url: str, wheel: str) -> str:
    """Return the set-up cell: pip-install the wheel (local, then the site's) or the repository.

    Args:
        book_url: Address of the hosted book; the wheel is at ``_downloads/<wheel>``.
        repository_url: Address of the git repository, for ``pip install git+...``.
        wheel: File name of the package's wheel.
    """
    distribution = wheel.split("-", 1)[0]
    book_url = book_url.rstrip("/") + "/"
    return SETUP_TEMPLATE.format(
        wheel_glob=json.dumps(f"{distribution}-*.whl"),
        wheel_path=json.dumps(f"_downloads/{wheel}"),
        git_url=json.dumps(f"git+{repository_url}"),
        book_url=json.dumps(book_url),
    )


def merge_outputs(notebook: nbformat.NotebookNode, executed: nbformat.NotebookNode) -> None:
    """Copy outputs and execution counts from ``executed`` into ``notebook``'s code cells.

    Raises:
        ValueError: If the two notebooks do not have the same code cells.
    """
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    ran = [cell for cell in executed.cells if cell.cell_type == "code"]
    if [c.source for c in code] != [c.source for c in ran]:
        raise ValueError("the executed notebook's code cells differ from the chapter's")
    for cell, done in zip(code, ran):
        cell.outputs = done.outputs
        cell.execution_count = done.get("execution_count")


def glued_values(executed: nbformat.NotebookNode) -> dict[str, str]:
    """Return the ``text/plain`` of every value the chapter's cells glued, by name."""
    values = {}
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                values[record["name"]] = output["data"].get(
                    record.get("mime_prefix", "") + "text/plain", ""
                )
    return values


def show_tags_to_jupyter(cell: nbformat.NotebookNode) -> None:
    """Add the ``jupyter`` metadata (collapsed input/output) that a display tag asks for."""
    for tag in cell.metadata.get("tags", []):
        for key in HIDDEN_BY_TAG.get(tag, ()):
            cell.metadata.setdefault("jupyter", {})[key] = True


def standalone_notebook(
    source: Path, executed: nbformat.NotebookNode, resolver: Resolver, setup: str
) -> nbformat.NotebookNode:
    """Return the chapter at ``source`` as a stand-alone notebook.

    Args:
        source: The chapter (a MyST-markdown notebook, or any format jupytext reads).
        executed: The notebook myst-nb executed for the chapter's page.
        resolver: Answers the chapter's references (see ``book_links.BookLinks``).
        setup: Source of the set-up cell placed first.
    """
    notebook = jupytext.read(source)
    merge_outputs(notebook, executed)
    converter = MarkdownConverter(resolver, glued_values(executed))
    cells = [nbformat.v4.new_code_cell(setup)]
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source, attachments = converter.convert(cell.source)
            if not cell.source:
                continue
            if attachments:
                cell.attachments = attachments
        elif cell.cell_type == "code":
            cell.metadata.pop("execution", None)
            show_tags_to_jupyter(cell)
        cells.append(cell)
    converter.finish()
    for index, cell in enumerate(cells):
        cell.id = hashlib.sha1(f"{index}\0{cell.source}".encode()).hexdigest()[:8]
    notebook.cells = cells
    metadata = {**executed.metadata, **notebook.metadata}
    notebook.metadata = nbformat.NotebookNode(
        {key: metadata[key] for key in KEEP_NOTEBOOK_METADATA if key in metadata}
    )
    notebook.nbformat, notebook.nbformat_minor = 4, max(notebook.nbformat_minor, 5)
    nbformat.validate(notebook)
    return notebook
