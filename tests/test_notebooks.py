"""The chapters as downloadable notebooks: made from the parsed pages, they run
anywhere.

The fast tests check the doctree-to-notebook writer, the set-up cell and the
wheel cache. The slow ones inspect the built site (``site``) and execute
every downloaded notebook.

How the execution test isolates a notebook:

* Folder: each notebook runs in its own new, empty temporary folder outside
  the checkout, with the wheel beside it. The run that installs the package
  starts the kernel in yet another empty folder and says where the notebook
  is only through ``JPY_SESSION_NAME``, as Jupyter Server does.
* Package: the kernel runs in a venv made with ``--without-pip``. A ``.pth``
  file adds a folder of symlinks to this environment's site-packages, minus
  every editable install (the checkout's ``transformer``, found from
  ``direct_url.json``) and any other install of ``transformer``. So torch
  and Jupyter are there, and ``transformer`` is there only once the set-up
  cell has installed it from the wheel in the site's archive; each notebook
  then checks that ``transformer.__file__`` is in that venv, not the
  checkout.
* Network: the kernel runs in a network namespace of its own
  (``unshare --net --map-root-user``: works as root, and wherever
  unprivileged user namespaces are allowed) and talks to nbclient over Unix
  sockets (ZeroMQ's ``ipc`` transport), because a namespace has no loopback
  to share. Where namespaces are not allowed, a ``sitecustomize`` in the
  kernel's venv refuses every connection that is not loopback or Unix
  instead. Either way a probe cell checks that pypi.org and 1.1.1.1 are out
  of reach, and a first run without the wheel shows the set-up cell's
  two-line error.
* Time: chapters run in parallel, one kernel per core. On 2 cores the
  attention chapter takes 6-10 s (kernel start included), plus about 10 s
  once for the venv, the failing run and the install run.
"""

from __future__ import annotations

import asyncio
import copy
import html
import importlib.metadata
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import jupytext
import nbformat
import pytest
from docutils import nodes
from docutils.core import publish_doctree
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from sphinx_exercise.nodes import exercise_enumerable_node, solution_node

from conftest import ROOT, chapters

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from cell_outputs import merge_streams  # noqa: E402
from doctree_notebook import doctree_cells  # noqa: E402
from notebook_download import (  # noqa: E402
    ARCHIVE,
    NOTEBOOK_BRANCH,
    RECIPE,
    cached_wheel,
    colab_url,
    recipe,
)
from standalone_notebook import CPU_INDEX, setup_cell_source  # noqa: E402

CONF = runpy.run_path(str(ROOT / "conf.py"))
NOTEBOOKS = ROOT / "_build" / "notebooks"
URL = "https://example.org/book/"

# MyST that Jupyter would show as raw text.
LEFTOVER_MYST = {
    "directive": re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{[^}]+\}", re.M),
    "role": re.compile(r"\{[A-Za-z][\w:+.-]*\}`"),
    "target": re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M),
    "comment": re.compile(r"^%", re.M),
    "equation label": re.compile(r"\$\$\s*\([^()\s]+\)"),
    "block break": re.compile(r"^\+\+\+", re.M),
    "directive option": re.compile(r"^:[\w-]+:", re.M),
}
FENCED_CODE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<code>.*?)^(?P=fence)\s*$", re.M | re.S
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


# -- The doctree as notebook cells ---------------------------------------------------
def code_cell(index: int) -> nodes.container:
    """A code cell as myst-nb puts it in a page's doctree."""
    return nodes.container(nb_element="cell_code", cell_index=index)


def executed(*sources: str | None) -> nbformat.NotebookNode:
    """A notebook of code cells (None: a Markdown cell) with one output each."""
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("x")
            if source is None
            else nbformat.v4.new_code_cell(
                source, outputs=[nbformat.v4.new_output("stream", text=source)]
            )
            for source in sources
        ]
    )


def write(
    doctree: nodes.Node, notebook=None, fignumbers=None
) -> tuple[list, list[str]]:
    warnings: list[str] = []
    cells = doctree_cells(
        doctree,
        notebook or executed(),
        page_url=URL + "attention.html",
        fignumbers=fignumbers or {},
        warn=warnings.append,
    )
    return cells, warnings


def parse(rst: str) -> nodes.document:
    """A doctree as Sphinx makes them: a page's first title stays a section title."""
    return publish_doctree(
        rst, settings_overrides={"report_level": 5, "doctitle_xform": False}
    )


def markdown(rst: str) -> str:
    (cell,), warnings = write(parse(rst))
    assert cell.cell_type == "markdown" and not warnings, warnings
    return cell.source


def test_doctree_cells_keep_text_math_and_code_for_jupyter():
    assert markdown(
        "A *soft* ``lookup`` costs $5 * 2, :math:`a_{ij}` is a weight:\n\n"
        ".. math::\n\n   \\sum_j a_{ij} = 1\n\n"
        "- one\n- two,\n  wrapped\n\n"
        "::\n\n   print('```')\n"
    ) == (
        "A *soft* `lookup` costs \\$5 \\* 2, $a_{ij}$ is a weight:\n\n"
        "$$\n\\sum_j a_{ij} = 1\n$$\n\n"
        "- one\n- two,\n  wrapped\n\n"
        "````\nprint('```')\n````"
    )


def test_doctree_cells_number_equations_as_the_page_does():
    (cell,), _ = write(
        nodes.section("", nodes.math_block("", "x = 1", label="eq-x", number=2))
    )
    assert cell.source == "$$\nx = 1\n\\tag{2}\n$$"


def test_doctree_cells_turn_admonitions_and_tables_into_markdown():
    assert markdown(
        ".. note::\n\n   Masks are **boolean**.\n\n"
        ".. admonition:: Why?\n\n   Because.\n\n"
        "==== =========\nmask meaning\n==== =========\n"
        "True may attend\n==== =========\n"
    ) == (
        "> **Note**\n>\n> Masks are **boolean**.\n\n> **Why?**\n>\n> Because.\n\n"
        "| mask | meaning |\n| --- | --- |\n| True | may attend |"
    )


def test_doctree_cells_link_references_to_the_hosted_book():
    assert markdown(
        "See `the masks <masking.html#sec-x>`_, `this`_ and https://pytorch.org.\n\n"
        ".. _this: #sec-scale\n"
    ) == (
        f"See [the masks]({URL}masking.html#sec-x), "
        f"[this]({URL}attention.html#sec-scale) "
        "and [https://pytorch.org](https://pytorch.org)."
    )


def test_doctree_cells_take_code_cells_from_the_executed_notebook():
    doctree = parse("Title\n=====\n\nFirst.\n\nSecond\n------\n\nThird.\n")
    doctree[0][-1] += code_cell(1)  # into the section "Second"
    doctree[0][-1] += code_cell(4)
    notebook = executed(None, "a = 1", None, "hidden = 2", "print(a)")
    cells, _ = write(doctree, notebook)
    assert [(c.cell_type, c.source) for c in cells] == [
        ("markdown", "# Title\n\nFirst."),
        ("markdown", "## Second\n\nThird."),
        ("code", "a = 1"),
        ("code", "hidden = 2"),  # a remove-cell cell: not on the page, kept in place
        ("code", "print(a)"),
    ]
    assert cells[-1].outputs == notebook.cells[4].outputs
    with pytest.raises(ValueError, match="code cell 2"):
        write(nodes.section("", code_cell(2)), notebook)


def test_doctree_cells_number_exercises_and_mark_solutions():
    exercise = exercise_enumerable_node("", nodes.title(), ids=["ex-one"])
    exercise += nodes.section(
        "", nodes.paragraph(text="Halve it."), ids=["exercise-content"]
    )
    solution = solution_node(
        "",
        nodes.title(
            "", "Solution to", nodes.reference("", " Exercise 7", refuri="#ex-one")
        ),
        nodes.section("", nodes.paragraph(text="It halves."), code_cell(0)),
    )
    doctree = nodes.section("", nodes.title(text="Exercises"), exercise, solution)
    cells, warnings = write(doctree, executed("x / 2"), {"exercise": {"ex-one": (7,)}})
    assert [c.source for c in cells] == [
        "# Exercises\n\n> **Exercise 7**\n>\n> Halve it.\n\n"
        f"**Solution to [Exercise 7]({URL}attention.html#ex-one)**"
        " (try the exercise first)"
        "\n\nIt halves.",
        "x / 2",
        "*End of the solution to Exercise 7.*",
    ]
    assert not warnings


def test_doctree_cells_render_a_rubric_without_a_warning():
    assert markdown(".. rubric:: Aside\n\nText.\n") == "**Aside**\n\nText."


def test_doctree_cells_report_nodes_they_cannot_render():
    doctree = parse("Text [#]_.\n\n.. [#] A footnote.\n")
    _, warnings = write(doctree)
    assert any("footnote" in w for w in warnings), warnings


# -- The set-up cell -------------------------------------------------------------
WHEEL = "executable_transformer-1.0-py3-none-any.whl"
GIT = "git+https://example.org/repo@0123abc"
SETUP = setup_cell_source(
    wheel=WHEEL, python=(3, 11), fallback=GIT, zip_url=URL + "all.zip"
)


def run_setup_cell(
    monkeypatch, cwd: Path, *, installed=None, works=(), env=None, ns=None, calls=None
):
    """Execute the set-up cell with pip replaced by a recorder; return pip's
    commands."""
    calls = [] if calls is None else calls

    def pip(command, *args, **kwargs):
        calls.append(command)
        return subprocess.CompletedProcess(command, 0 if command[-1] in works else 1)

    def version(name):
        if installed is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed

    monkeypatch.setattr(subprocess, "run", pip)
    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("TORCH_INDEX_URL", raising=False)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    exec(compile(SETUP, "setup-cell", "exec"), dict(ns or {}))
    return calls


def test_setup_cell_does_nothing_when_the_version_is_installed(monkeypatch, tmp_path):
    assert run_setup_cell(monkeypatch, tmp_path, installed="1.0") == []


def test_setup_cell_takes_the_wheel_beside_the_notebook_first(monkeypatch, tmp_path):
    beside, cwd = tmp_path / "notebooks", tmp_path / "elsewhere"
    beside.mkdir(), cwd.mkdir()
    (beside / WHEEL).touch(), (cwd / WHEEL).touch()
    for how in [
        {"env": {"JPY_SESSION_NAME": str(beside / "a.ipynb")}},
        {"ns": {"__vsc_ipynb_file__": str(beside / "a.ipynb")}},
    ]:
        calls = run_setup_cell(
            monkeypatch, cwd, installed="0.9", works={str(beside / WHEEL)}, **how
        )
        assert [c[-1] for c in calls] == [str(beside / WHEEL)]
    # Without a notebook path: the wheel in the working folder.
    calls = run_setup_cell(monkeypatch, cwd, works={str(cwd / WHEEL)})
    assert [c[-1] for c in calls] == [str(cwd / WHEEL)]


def test_setup_cell_installs_cpu_torch_unless_told_otherwise(monkeypatch, tmp_path):
    (call,) = run_setup_cell(monkeypatch, tmp_path, works={GIT})
    assert (
        call[call.index("--extra-index-url") + 1]
        == CPU_INDEX
        == "https://download.pytorch.org/whl/cpu"
    )
    (call,) = run_setup_cell(
        monkeypatch, tmp_path, works={GIT}, env={"TORCH_INDEX_URL": ""}
    )
    assert "--extra-index-url" not in call


def test_setup_cell_falls_back_to_the_commit_then_says_what_to_do(
    monkeypatch, tmp_path
):
    (tmp_path / WHEEL).touch()
    calls = []
    with pytest.raises(RuntimeError) as error:  # e.g. offline, and torch is missing
        run_setup_cell(monkeypatch, tmp_path, calls=calls)
    assert [c[-1] for c in calls] == [str(tmp_path / WHEEL), GIT]
    first, second = str(error.value).split("\n")
    assert first.startswith("This notebook needs Python >= 3.11 (this is ")
    assert second == (
        f"Put {WHEEL} beside this notebook, or use the zip of all notebooks: "
        f"{URL}all.zip"
    )


def test_setup_cell_on_an_old_python_says_so_without_pip(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "version_info", (3, 10, 0))
    calls = []
    with pytest.raises(RuntimeError, match=r"^This notebook needs Python >= 3\.11"):
        run_setup_cell(monkeypatch, tmp_path, works={GIT}, calls=calls)
    assert calls == []


def test_setup_cell_is_short_and_says_what_it_does():
    lines = SETUP.splitlines()
    assert len(lines) <= 32 and all(
        len(line) <= 100 for line in lines if URL not in line
    )
    assert lines[0].startswith(
        "# Set-up: install this book's package, executable-transformer 1.0,"
    )


# -- The wheel, once per package state -----------------------------------------------
@pytest.mark.slow
def test_wheel_is_built_once_per_package_state(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "code" / "demo").mkdir(parents=True)
    (project / "README.md").write_text("# demo\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1.0"\n'
        '[tool.setuptools.packages.find]\nwhere = ["code"]\n'
    )
    module = project / "code" / "demo" / "__init__.py"
    module.write_text("A = 1\n")
    package, cache = project / "code" / "demo", tmp_path / "cache"
    first = cached_wheel(project, package, cache)
    assert first.name == "demo-1.0-py3-none-any.whl"
    module.write_text("A = 2\n")
    second = cached_wheel(project, package, cache)
    assert (
        second != first
        and zipfile.ZipFile(second).read("demo/__init__.py") == b"A = 2\n"
    )
    module.write_text("A = 1\n")  # the revert: from the cache, pip never runs
    monkeypatch.setattr(
        subprocess, "run", lambda *a, **k: pytest.fail("rebuilt a cached wheel")
    )
    assert cached_wheel(project, package, cache) == first
    assert not list(project.rglob("*.egg-info")) and not (project / "build").exists()


# -- The recipe: one text in the README, the index and the archive --------------------
def test_recipe_installs_jupyter_with_cpu_torch():
    text = recipe(ROOT / "README.md")
    assert "jupyterlab" in text and f"--extra-index-url {CPU_INDEX}" in text
    assert "pip install -r requirements.txt" in text
    index = (ROOT / "book" / "index.md").read_text()
    assert (
        f":start-after: {RECIPE[0]}" in index and f":end-before: {RECIPE[1]}" in index
    )


def test_pages_workflow_publishes_the_notebooks_where_colab_links_point():
    pages = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert "git -C _build/notebooks" in pages and "contents: write" in pages
    assert f'origin "$commit:refs/heads/{NOTEBOOK_BRANCH}"' in pages
    owner_repo = CONF["REPOSITORY_URL"].removeprefix("https://github.com/")
    assert colab_url(CONF["REPOSITORY_URL"], "attention") == (
        f"https://colab.research.google.com/github/{owner_repo}/blob/{NOTEBOOK_BRANCH}/attention.ipynb"
    )
    assert colab_url("https://gitlab.com/a/b", "attention") is None


# -- The built notebooks and the archive ------------------------------------------
def cells(notebook) -> list[tuple]:
    return [
        (c.cell_type, c.source, json.dumps(c.metadata, sort_keys=True))
        for c in notebook.cells
    ]


def markdown_without_code(notebook) -> str:
    text = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return FENCED_CODE.sub("", text)


@pytest.fixture(scope="session")
def notebooks(site) -> dict[str, nbformat.NotebookNode]:
    return {
        name: nbformat.read(site / "_sources" / f"{name}.ipynb", as_version=4)
        for name in chapters()
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_download_is_the_standalone_notebook(site, notebooks, name):
    page = (site / f"{name}.html").read_text()
    assert f"_sources/{name}.ipynb" in page
    assert (site / "_sources" / f"{name}.ipynb").read_bytes() == (
        NOTEBOOKS / f"{name}.ipynb"
    ).read_bytes()
    notebook = notebooks[name]
    nbformat.validate(notebook)
    wheel = next((site / "_downloads").glob("*.whl")).name
    setup = notebook.cells[0]
    assert setup.cell_type == "code" and not setup.outputs
    assert f'wheel = "0.1.0", "{wheel}"'.split(",", 1)[1] in setup.source
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    repository = re.search(r'^repository = "(.*)"$', setup.source, re.M)[1]
    assert repository.startswith(f"git+{CONF['REPOSITORY_URL']}@")
    assert (
        repository.endswith("@" + commit) or "@v" in repository
    )  # the commit or its tag
    assert f'archive = "{CONF["BOOK_URL"]}_downloads/{ARCHIVE}"' in setup.source
    assert set(notebook.metadata) <= {"kernelspec", "language_info"}
    code = [c for c in notebook.cells[1:] if c.cell_type == "code"]
    # every cell ran; hidden cells that only glue or assert print nothing
    assert code and all(c.execution_count is not None for c in code)
    assert any(c.outputs for c in code)


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_has_no_myst_syntax_left(notebooks, name):
    notebook = notebooks[name]
    markdown = "\n\n".join(
        c.source for c in notebook.cells if c.cell_type == "markdown"
    )
    leftovers = [
        kind
        for kind, pattern in LEFTOVER_MYST.items()
        if pattern.search(
            markdown if kind == "directive" else markdown_without_code(notebook)
        )
    ]
    assert not leftovers, leftovers
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not re.match(r"\s*(:[\w-]+:|---\n)", cell.source), cell.source[:80]


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_links_point_at_the_hosted_book(notebooks, name):
    markdown = "\n".join(
        c.source for c in notebooks[name].cells if c.cell_type == "markdown"
    )
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        assert target.startswith(("https://", "http://", "attachment:", "mailto:")), (
            target
        )
    book = re.escape(CONF["BOOK_URL"].rstrip("/"))
    if re.search(
        r"\{(ref|doc|numref|eq)\}`", (ROOT / "book" / f"{name}.md").read_text()
    ):
        assert re.search(rf"\]\({book}/[\w/-]+\.html", markdown), (
            "no link to the hosted book"
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_shows_the_code_the_page_shows(site, notebooks, name):
    """A literalinclude's code in the notebook is byte for byte a code block of the
    page."""
    page_blocks = {
        html.unescape(re.sub(r"<[^>]+>", "", block)).rstrip()
        for block in re.findall(
            r"<pre>(.*?)</pre>", (site / f"{name}.html").read_text(), re.S
        )
    }
    markdown = "\n\n".join(
        c.source for c in notebooks[name].cells if c.cell_type == "markdown"
    )
    blocks = [m["code"].rstrip() for m in FENCED_CODE.finditer(markdown)]
    assert blocks or "literalinclude" not in (ROOT / "book" / f"{name}.md").read_text()
    for block in blocks:
        assert block in page_blocks, block[:200]


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_round_trips_through_jupytext(notebooks, name):
    notebook = notebooks[name]
    again = jupytext.reads(jupytext.writes(notebook, "md:myst"), "md:myst")
    assert cells(again) == cells(notebook)


@pytest.mark.slow
def test_archive_holds_notebooks_wheel_requirements_and_readme(site):
    with zipfile.ZipFile(site / "_downloads" / ARCHIVE) as archive:
        names = {
            Path(name).relative_to(Path(ARCHIVE).stem).as_posix()
            for name in archive.namelist()
        }
        wheel = next(n for n in names if n.endswith(".whl"))
        requirements = archive.read(f"{Path(ARCHIVE).stem}/requirements.txt").decode()
        readme = archive.read(f"{Path(ARCHIVE).stem}/README.md").decode()
    expected = {f"{name}.ipynb" for name in chapters()} | {
        wheel,
        "requirements.txt",
        "README.md",
    }
    assert names == expected
    assert names == {
        p.name for p in NOTEBOOKS.iterdir()
    }  # what `make notebooks` writes
    assert (site / "_downloads" / wheel).is_file()
    assert f"./{wheel}" in requirements.splitlines()
    assert re.search(r"^torch\b", requirements, re.M) and "ipykernel" in requirements
    # The chapters that need an extra (Triton's kernels, Hugging Face's models)
    # run from the zip too.
    assert re.search(r"^triton\b", requirements, re.M)
    assert re.search(r"^transformers\b", requirements, re.M)
    assert all(f"`{name}.ipynb`" in readme for name in chapters())
    assert recipe(ROOT / "README.md") in readme
    index = (site / "index.html").read_text()
    assert f'href="_downloads/{ARCHIVE}"' in index
    # The index shows the README's recipe (it includes those lines).
    commands = re.search(r"```bash\n(.*?)```", recipe(ROOT / "README.md"), re.S)[1]
    shown = html.unescape(re.sub(r"<[^>]+>", "", index))
    assert commands.strip() in shown


@pytest.mark.slow
def test_notebooks_and_archive_contain_no_machine_paths(site):
    needles = {
        str(ROOT),
        os.path.realpath(ROOT),
        str(Path.home()) + "/",
        tempfile.gettempdir() + "/",
    }
    texts = {
        p.name: p.read_text()
        for p in NOTEBOOKS.iterdir()
        if p.suffix in {".ipynb", ".md", ".txt"}
    }
    offenders = [
        f"{name}: {needle}"
        for name, text in texts.items()
        for needle in needles
        if needle in text
    ]
    assert texts and not offenders, offenders


# -- Executing the notebooks offline, from the wheel only --------------------------
PROBE = """\
import socket, transformer

def reachable(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return True
    except OSError:
        return False

print(transformer.__file__)
online = reachable("pypi.org", 443) or reachable("1.1.1.1", 53)
print("network", "open" if online else "none")"""

SOCKET_GUARD = '''"""No network in this interpreter: only loopback and Unix sockets
connect."""
import ipaddress, socket

def _local(address):
    if not isinstance(address, tuple):
        return True
    try:
        return ipaddress.ip_address(address[0]).is_loopback
    except ValueError:
        return address[0] == "localhost"

def _guard(method):
    def guarded(self, address, *args):
        if not _local(address):
            raise OSError(101, "Network is unreachable (no network in this test)")
        return method(self, address, *args)
    return guarded

socket.socket.connect = _guard(socket.socket.connect)
socket.socket.connect_ex = _guard(socket.socket.connect_ex)
_getaddrinfo = socket.getaddrinfo

def _no_dns(host, *args, **kwargs):
    if host is not None and not _local((host,)):
        raise socket.gaierror(
            -3, "Temporary failure in name resolution (no network in this test)"
        )
    return _getaddrinfo(host, *args, **kwargs)

socket.getaddrinfo = _no_dns
'''


def installs_of_the_package(site_packages: Path) -> set[str]:
    """Names in site-packages that install `transformer`: editable (the checkout) or
    not."""
    names = set()
    for dist in site_packages.glob("*.dist-info"):
        direct_url = dist / "direct_url.json"
        url = json.loads(direct_url.read_text()) if direct_url.is_file() else {}
        editable = url.get("dir_info", {}).get("editable", False)
        record = (
            (dist / "RECORD").read_text().splitlines()
            if (dist / "RECORD").is_file()
            else []
        )
        tops = {line.split(",")[0].split("/")[0] for line in record}
        if editable or "transformer" in tops:
            names |= {dist.name} | tops
    return names


class OfflineKernel:
    """A Jupyter kernel with this environment's packages but not the checkout, and no
    network."""

    def __init__(self, root: Path) -> None:
        self.root = root
        venv = root / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
        )
        self.python = venv / "bin" / "python"
        self.site_packages = Path(
            subprocess.check_output(
                [
                    self.python,
                    "-c",
                    "import sysconfig; print(sysconfig.get_path('purelib'))",
                ],
                text=True,
            ).strip()
        )
        ours = Path(sysconfig.get_path("purelib"))
        view = root / "dependencies"  # outside the venv: pip never uninstalls from here
        view.mkdir()
        skip = installs_of_the_package(ours)
        for entry in ours.iterdir():
            if entry.name not in skip:
                (view / entry.name).symlink_to(entry)
        (self.site_packages / "book-dependencies.pth").write_text(
            f"import site; site.addsitedir({str(view)!r})\n"
        )

        namespace = ["unshare", "--net", "--map-root-user"]
        if (
            shutil.which("unshare")
            and subprocess.run([*namespace, "true"], capture_output=True).returncode
            == 0
        ):
            self.isolation, prefix = "network namespace", namespace
        else:
            self.isolation, prefix = "socket guard", []
            (self.site_packages / "sitecustomize.py").write_text(SOCKET_GUARD)
        argv = [
            *prefix,
            str(self.python),
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ]
        spec = {
            "argv": argv,
            "display_name": "Python 3 (offline)",
            "language": "python",
        }
        (root / "kernels" / "python3").mkdir(parents=True)
        (root / "kernels" / "python3" / "kernel.json").write_text(json.dumps(spec))
        (root / "ipc").mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA", "JUPYTER_PATH"))
        }

    async def run(
        self,
        notebook: nbformat.NotebookNode,
        folder: Path,
        name: str,
        path=None,
        **options,
    ) -> nbformat.NotebookNode:
        """Run ``notebook``, saved at ``path``, in a kernel started in ``folder``.

        ``path`` defaults to ``folder/<name>.ipynb``; ``options`` go to nbclient.
        """
        specs = KernelSpecManager(
            kernel_dirs=[str(self.root / "kernels")], ensure_native_kernel=False
        )
        manager = AsyncKernelManager(
            kernel_name="python3",
            kernel_spec_manager=specs,
            transport="ipc",
            ip=str(self.root / "ipc" / name),
        )
        client = NotebookClient(
            notebook,
            km=manager,
            timeout=900,
            resources={"metadata": {"path": str(folder)}},
            **options,
        )
        # Jupyter Server tells a kernel where its notebook is, as the set-up cell reads
        # it.
        env = {**self.env, "JPY_SESSION_NAME": str(path or folder / f"{name}.ipynb")}
        return await client.async_execute(env=env, cleanup_kc=True)


def with_probe(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(notebook)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    return notebook


def probe_result(notebook: nbformat.NotebookNode) -> tuple[Path, str]:
    text = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    path, network = text.strip().split("\n")
    return Path(path), network.removeprefix("network ")


@pytest.fixture(scope="session")
def offline(site, tmp_path_factory) -> dict:
    """Run the set-up cell without the wheel, then with it, then every chapter offline.

    The install run's kernel starts in an empty folder; its notebook lies in the
    unpacked archive, beside the wheel. Each chapter then runs from a folder of
    its own that holds only the notebook and the wheel.
    """
    kernel = OfflineKernel(tmp_path_factory.mktemp("kernel"))
    unpacked = tmp_path_factory.mktemp("archive")
    with zipfile.ZipFile(site / "_downloads" / ARCHIVE) as archive:
        archive.extractall(unpacked)
    folder = unpacked / Path(ARCHIVE).stem
    wheel = next(folder.glob("*.whl"))
    first = nbformat.read(folder / f"{chapters()[0]}.ipynb", as_version=4)
    install = nbformat.v4.new_notebook(
        metadata=first.metadata,
        cells=[
            nbformat.v4.new_code_cell(
                'import importlib.util\nprint(importlib.util.find_spec("transformer"))'
            ),
            first.cells[0],
        ],
    )
    failing = nbformat.v4.new_notebook(metadata=first.metadata, cells=[first.cells[0]])

    def empty(prefix: str) -> Path:
        return Path(
            tempfile.mkdtemp(prefix=f"{prefix}-", dir=tmp_path_factory.getbasetemp())
        )

    async def run_all() -> dict:
        results = {
            "failing": await kernel.run(
                failing, empty("no-wheel"), "failing", allow_errors=True
            ),
            "install": await kernel.run(
                with_probe(install),
                empty("elsewhere"),
                "install",
                path=folder / "first.ipynb",
            ),
        }
        slots = asyncio.Semaphore(os.cpu_count() or 1)

        async def one(name: str):
            async with slots:
                start = time.perf_counter()
                alone = empty(name)
                shutil.copy(folder / f"{name}.ipynb", alone)
                shutil.copy(wheel, alone)
                notebook = nbformat.read(alone / f"{name}.ipynb", as_version=4)
                try:
                    ran = await kernel.run(with_probe(notebook), alone, name)
                except Exception as error:  # reported by that chapter's test
                    ran = error
                return name, (ran, time.perf_counter() - start, alone)

        results.update(await asyncio.gather(*(one(name) for name in chapters())))
        return results

    results = asyncio.run(run_all())
    results["kernel"], results["folder"] = kernel, folder
    return results


@pytest.mark.slow
def test_setup_cell_offline_without_the_wheel_says_what_to_do(offline):
    (error,) = [
        o for o in offline["failing"].cells[0].outputs if o.output_type == "error"
    ]
    assert error.ename == "RuntimeError"
    first, second = error.evalue.split("\n")
    assert re.match(
        r"This notebook needs Python >= 3\.\d+ \(this is 3\.\d+\.\d+\) and ", first
    )
    assert re.fullmatch(
        r"Put executable_transformer-\S+\.whl beside this notebook, "
        r"or use the zip of all notebooks: "
        rf"{re.escape(CONF['BOOK_URL'])}_downloads/{ARCHIVE}",
        second,
    )


@pytest.mark.slow
def test_setup_cell_installs_the_wheel_beside_the_notebook_from_another_folder(offline):
    kernel, install = offline["kernel"], offline["install"]
    before = install.cells[0].outputs[0].text.strip()
    assert before == "None", (
        f"transformer was importable before the set-up cell: {before}"
    )
    printed = "".join(o.get("text", "") for o in install.cells[1].outputs).strip()
    wheel = Path(printed.removeprefix("pip install "))
    assert wheel.parent == offline["folder"], (
        printed
    )  # the notebook's folder, not the kernel's
    path, network = probe_result(install)
    assert network == "none", f"the kernel reached the network ({kernel.isolation})"
    assert path.resolve().is_relative_to(kernel.site_packages.resolve()), path
    assert not path.resolve().is_relative_to(ROOT.resolve())
    print(f"isolation: {kernel.isolation}")


class PageOutputs(HTMLParser):
    """The text outputs (stdout streams, plain text) of each code cell of a myst-nb
    page."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.cells: list[list[str]] = []
        self._depth = 0
        self._capture: tuple[int, list[str]] | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag != "div":
            return
        self._depth += 1
        classes = (dict(attrs).get("class") or "").split()
        if "cell" in classes and "docutils" in classes:
            self.cells.append([])
        elif (
            "output" in classes
            and {"stream", "text_plain"} & set(classes)
            and self._capture is None
        ):
            self._capture = (self._depth, [])

    def handle_endtag(self, tag):
        if tag != "div":
            return
        if self._capture and self._capture[0] == self._depth:
            self.cells[-1].append("".join(self._capture[1]))
            self._capture = None
        self._depth -= 1

    def handle_data(self, data):
        if self._capture:
            self._capture[1].append(data)


def notebook_outputs(notebook: nbformat.NotebookNode) -> list[list[str]]:
    """The same texts from a notebook's chapter cells, as myst-nb renders them."""
    result = []
    for cell in notebook.cells[1:]:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or "remove-cell" in tags:
            continue
        texts = []
        if "remove-output" not in tags:
            for output in merge_streams(copy.deepcopy(cell.outputs)):
                if output.output_type == "stream" and output.name == "stdout":
                    texts.append(output.text)
                elif output.get("data") and set(output.data) == {"text/plain"}:
                    texts.append(output.data["text/plain"])
        result.append(texts)
    return result


def normalise(text: str) -> str:
    """Drop what may differ between two runs of the same code: the date, the git
    commit."""
    text = ANSI.sub("", text).strip("\n")
    text = re.sub(r"Outputs computed on .*? UTC", "Outputs computed on <date>", text)
    text = re.sub(
        r", commit [0-9a-f]+(\+dirty)?", "", text
    )  # a wheel is no git checkout
    return "\n".join(line.rstrip() for line in text.split("\n"))


def assert_same_outputs(page: list[list[str]], notebook: list[list[str]]) -> None:
    assert len(notebook) == len(page), (
        "the notebook and the page have different code cells"
    )
    for index, (on_page, in_notebook) in enumerate(zip(page, notebook)):
        assert [normalise(t) for t in in_notebook] == [normalise(t) for t in on_page], (
            f"code cell {index}"
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_download_shows_the_outputs_of_the_page(site, notebooks, name):
    assert_same_outputs(
        PageOutputs((site / f"{name}.html").read_text()).cells,
        notebook_outputs(notebooks[name]),
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_runs_offline_from_the_wheel_and_prints_the_page_numbers(
    site, offline, name
):
    ran, seconds, folder = offline[name]
    if isinstance(ran, Exception):
        raise ran
    print(f"{name}: {seconds:.1f} s")
    kernel = offline["kernel"]
    assert not ran.cells[0].outputs, (
        "the set-up cell did something though transformer is installed"
    )
    path, network = probe_result(ran)
    assert network == "none", f"the kernel reached the network ({kernel.isolation})"
    assert path.resolve().is_relative_to(kernel.site_packages.resolve()), path
    assert not folder.resolve().is_relative_to(ROOT.resolve())
    ran.cells.pop()  # the probe
    assert_same_outputs(
        PageOutputs((site / f"{name}.html").read_text()).cells, notebook_outputs(ran)
    )
