"""A chapter as a stand-alone notebook: a set-up cell, then the page's cells.

The set-up cell (:func:`setup_cell_source`) installs the book's package only
when the version the notebook was built with is not installed. It looks for
the package's wheel

1. in the notebook's own folder, when the front end says where the notebook
   is: VS Code sets ``__vsc_ipynb_file__`` in the kernel, Jupyter Server sets
   ``JPY_SESSION_NAME`` to the notebook's path;
2. in the working folder, which Jupyter and VS Code start in the notebook's
   folder (so 1 matters when a kernel was started elsewhere);

and else installs the repository at the tag or commit the book was built
from. ``torch`` comes from PyTorch's CPU wheel index unless the environment
variable ``TORCH_INDEX_URL`` names another index ("" for pip's default). If
nothing installs, it raises an error of two lines: the Python version needed,
then "put the wheel beside this notebook, or use the zip".
"""

from __future__ import annotations

import copy
import hashlib
import json

import nbformat

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
KEEP_METADATA = ("kernelspec", "language_info")
HIDDEN_BY_TAG = {
    "hide-input": ("source_hidden",),
    "remove-input": ("source_hidden",),
    "hide-output": ("outputs_hidden",),
    "remove-output": ("outputs_hidden",),
    "hide-cell": ("source_hidden", "outputs_hidden"),
    "remove-cell": ("source_hidden", "outputs_hidden"),
}

SETUP_TEMPLATE = """\
# Set-up: install this book's package, {distribution_text} {version_text}, unless it is installed.
# pip takes the wheel from this notebook's folder or the working folder, else the
# repository at the commit the book was built from; torch is CPU-only unless the
# environment variable TORCH_INDEX_URL names another index ("" for pip's default).
import importlib, importlib.metadata as metadata, os, pathlib, subprocess, sys

version, wheel = {version}, {wheel}
repository = {fallback}
archive = {zip_url}
try:
    installed = metadata.version({distribution})
except metadata.PackageNotFoundError:
    installed = None
if installed != version:
    notebook = globals().get("__vsc_ipynb_file__") or os.environ.get("JPY_SESSION_NAME", "")
    folders = [pathlib.Path(notebook).parent.resolve(), pathlib.Path.cwd()]
    sources = [str(f / wheel) for f in folders if (f / wheel).is_file()][:1]
    sources += [repository] * bool(repository)
    index = os.environ.get("TORCH_INDEX_URL", {index})
    pip = [sys.executable, "-m", "pip", "install", "-q", "--retries", "1"]
    pip += ["--extra-index-url", index] * bool(index)
    for source in sources if sys.version_info >= {python} else []:
        print("pip install", source)
        if subprocess.run(pip + [source], capture_output=True).returncode == 0:
            break
    else:
        raise RuntimeError(
            f"This notebook needs Python >= {python_text} (this is {{sys.version.split()[0]}}) and "
            f"{distribution_text} {{version}}, which pip could not install.\\n"
            f"Put {{wheel}} beside this notebook, or use the zip of all notebooks: {{archive}}"
        )
    importlib.invalidate_caches()"""


def setup_cell_source(
    *, wheel: str, python: tuple[int, int], fallback: str | None, zip_url: str
) -> str:
    """Return the set-up cell's source.

    Args:
        wheel: File name of the package's wheel (``<distribution>-<version>-...whl``).
        python: Oldest Python the package supports, as ``(major, minor)``.
        fallback: What pip installs without the wheel (``git+<repository>@<commit>``),
            or None.
        zip_url: Address of the zip of all notebooks.
    """
    distribution, version = wheel.split("-")[:2]
    distribution = distribution.replace("_", "-")
    strings = dict(distribution=distribution, version=version, wheel=wheel, zip_url=zip_url)
    return SETUP_TEMPLATE.format(
        **{key: json.dumps(value) for key, value in strings.items()},
        fallback=json.dumps(fallback or ""),
        index=json.dumps(CPU_INDEX),
        python=tuple(python),
        python_text=".".join(map(str, python)),
        distribution_text=distribution,
        version_text=version,
    )


def standalone_notebook(
    cells: list[nbformat.NotebookNode], executed: nbformat.NotebookNode, setup: str
) -> nbformat.NotebookNode:
    """Return a valid notebook of ``setup``'s cell followed by ``cells``.

    The tags that hide a cell's input or output on the page also collapse it in
    JupyterLab (``jupyter`` metadata). Cell ids are derived from the content,
    and timings and notebook metadata that could name a machine are dropped.

    Args:
        cells: The chapter's cells (``doctree_notebook.doctree_cells``).
        executed: The notebook myst-nb executed, for the kernel's metadata.
        setup: Source of the set-up cell placed first.
    """
    notebook = nbformat.v4.new_notebook(
        metadata={k: executed.metadata[k] for k in KEEP_METADATA if k in executed.metadata}
    )
    notebook.cells = [nbformat.v4.new_code_cell(setup)]
    for cell in cells:
        cell = copy.deepcopy(cell)
        cell.metadata.pop("execution", None)
        for tag in cell.metadata.get("tags", []):
            for key in HIDDEN_BY_TAG.get(tag, ()):
                cell.metadata.setdefault("jupyter", {})[key] = True
        notebook.cells.append(cell)
    for index, cell in enumerate(notebook.cells):
        cell.id = hashlib.sha1(f"{index}\0{cell.source}".encode()).hexdigest()[:8]
    nbformat.validate(notebook)
    return notebook
