"""A chapter as a stand-alone notebook: a set-up cell, then the page's cells.

The set-up cell finds the wheel wherever a reader opens the notebook: VS Code sets
``__vsc_ipynb_file__`` and Jupyter Server ``JPY_SESSION_NAME`` to the notebook's
path (relative to the server's folder in some versions, hence the working folder
as second place to look); if nothing installs, it says what to do in two lines.
"""

import copy
import hashlib
import json
from string import Template

import nbformat
from packaging.utils import parse_wheel_filename

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Tags hide-input, remove-output, ...: the metadata that collapses a cell in JupyterLab
HIDDEN = {
    "input": ["source_hidden"],
    "output": ["outputs_hidden"],
    "cell": ["source_hidden", "outputs_hidden"],
}

# The set-up cell; setup_cell_source fills in the $names.
SETUP = """\
# Set-up: install this book's package, $name $version, unless it is installed:
# the wheel in this notebook's or the working folder, else the repository at the
# built commit. torch is CPU-only unless TORCH_INDEX_URL names another ("": pip's).
import importlib, importlib.metadata as metadata, os, pathlib, subprocess, sys
distribution, cpu_index = $distribution, $cpu_index
version, wheel, python = $version_string, $wheel, $python
repository = $repository
archive = $archive
try:
    installed = metadata.version(distribution)
except metadata.PackageNotFoundError:
    installed = None
if installed != version:
    notebook = globals().get("__vsc_ipynb_file__") or os.getenv("JPY_SESSION_NAME", "")
    folders = [pathlib.Path(notebook).parent.resolve(), pathlib.Path.cwd()]
    sources = [str(f / wheel) for f in folders if (f / wheel).is_file()][:1]
    sources += [repository] * bool(repository)
    index = os.environ.get("TORCH_INDEX_URL", cpu_index)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--retries", "1"]
    pip += ["--extra-index-url", index] * bool(index)
    for source in sources if sys.version_info >= python else []:
        print("pip install", source)
        if subprocess.run(pip + [source], capture_output=True).returncode == 0:
            break
    else:
        raise RuntimeError(
            f"This notebook needs Python >= {'.'.join(map(str, python))} (this is "
            f"{sys.version.split()[0]}) and {distribution} {version}, which pip "
            f"could not install.\\nPut {wheel} beside this notebook, or use the zip "
            f"of all notebooks: {archive}"
        )
    importlib.invalidate_caches()"""


def setup_cell_source(
    *, wheel: str, python: tuple[int, int], fallback: str | None, zip_url: str
) -> str:
    """Return the set-up cell's source, for ``wheel`` (its file name names the
    distribution and version), the oldest ``python`` and the ``fallback`` that pip
    installs without the wheel (``git+<repository>@<commit>``, or None)."""
    name, version, *_ = parse_wheel_filename(wheel)
    values = dict(distribution=name, cpu_index=CPU_INDEX, version_string=str(version))
    values.update(wheel=wheel, repository=fallback or "", archive=zip_url)
    values = {key: json.dumps(value) for key, value in values.items()}
    return Template(SETUP).substitute(values, name=name, version=version, python=python)


def standalone_notebook(
    cells: list[nbformat.NotebookNode], executed: nbformat.NotebookNode, setup: str
) -> nbformat.NotebookNode:
    """Return a valid notebook of ``setup``'s cell, then copies of ``cells``: ids from
    the content, no timings, no notebook metadata but the kernel's (no machine's)."""
    kept = ("kernelspec", "language_info")
    metadata = {k: v for k, v in executed.metadata.items() if k in kept}
    notebook = nbformat.v4.new_notebook(metadata=metadata)
    notebook.cells = [nbformat.v4.new_code_cell(setup), *copy.deepcopy(cells)]
    for index, cell in enumerate(notebook.cells):
        cell.metadata.pop("execution", None)
        for tag in cell.metadata.get("tags", []):
            hides, _, what = tag.partition("-")
            for key in HIDDEN.get(what, []) if hides in ("hide", "remove") else []:
                cell.metadata.setdefault("jupyter", {})[key] = True
        cell.id = hashlib.sha1(f"{index}\0{cell.source}".encode()).hexdigest()[:8]
    nbformat.validate(notebook)
    return notebook
