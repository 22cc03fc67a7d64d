"""The chapters as downloadable notebooks (issue #6): they run anywhere.

The fast tests check the MyST-to-Markdown conversion, the set-up cell and
jupytext's round trip. The slow ones inspect the built site (``site``) and
execute every downloaded notebook.

How the execution test isolates a notebook:

* Folder: each notebook runs in its own new, empty temporary folder outside
  the checkout.
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
  of reach.
* Time: chapters run in parallel, one kernel per core. On 2 cores the
  attention chapter takes 6-10 s (kernel start included), plus about 6 s
  once for the venv and the install run; a chapter costs here about what
  its execution costs in the book build.
"""

from __future__ import annotations

import asyncio
import copy
import html
import importlib.util
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
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from myst_nb.core.read import read_myst_markdown_notebook
from nbclient import NotebookClient

from conftest import ROOT, chapters

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from myst_markdown import Attachment, Link, MarkdownConverter  # noqa: E402
from standalone_notebook import setup_cell_source  # noqa: E402
from cell_outputs import merge_streams  # noqa: E402

CONF = runpy.run_path(str(ROOT / "conf.py"))
ARCHIVE = "executable-transformer-notebooks.zip"
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


# -- MyST to Markdown ------------------------------------------------------------
class FakeBook:
    """A resolver with a few known targets that records warnings."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.includes: list[tuple[str, dict]] = []

    def link(self, kind, target):
        return {
            ("ref", "sec-scale"): Link(URL + "attention.html#sec-scale", "Why $\\sqrt{d_k}$?"),
            ("doc", "masks"): Link(URL + "masks.html", "Masks"),
            ("exercise", "ex-one"): Link(URL + "attention.html#ex-one", "Exercise", "1"),
            ("eq", "eq-attention"): Link(URL + "attention.html#equation-eq-attention", "", "2"),
            ("py", "transformer.causal_mask"): Link(URL + "api.html#transformer.causal_mask"),
        }.get((kind, target))

    def literalinclude(self, argument, options):
        self.includes.append((argument, options))
        return "def f(x):\n    return x\n", "python"

    def attachment(self, path):
        return (
            Attachment("figure.png", "image/png", "iVBORw0KGgo=") if path == "figure.png" else None
        )

    def warn(self, message, subtype):
        self.warnings.append(message)


def convert(*cells: str) -> tuple[list[str], FakeBook]:
    book = FakeBook()
    converter = MarkdownConverter(book)
    out = [converter.convert(cell)[0] for cell in cells]
    converter.finish()
    return out, book


def test_myst_markdown_admonition_becomes_block_quote():
    (text,), book = convert(
        ":::{note}\nMasks are **boolean**.\n:::\n\n```{admonition} Why?\nBecause.\n```"
    )
    assert text == "> **Note**\n>\n> Masks are **boolean**.\n\n> **Why?**\n>\n> Because."
    assert not book.warnings


def test_myst_markdown_exercise_and_solution_are_kept_and_marked():
    (exercise, after), book = convert(
        "```{exercise}\n:label: ex-one\n\nDivide by $\\sqrt{2 d_k}$.\n```\n\n"
        "```{solution-start} ex-one\n:class: dropdown\n```\n\nThe variance halves.",
        "```{solution-end}\n```\n\nNext.",
    )
    assert exercise.startswith("> **Exercise 1**\n>\n> Divide by $\\sqrt{2 d_k}$.")
    assert "**Solution to Exercise 1**" in exercise and exercise.endswith("The variance halves.")
    assert after == "*End of the solution to Exercise 1.*\n\nNext."
    assert not book.warnings


def test_myst_markdown_roles_become_links_to_the_hosted_book():
    (text,), book = convert(
        "See {ref}`sec-scale`, {doc}`the masks <masks>`, {eq}`eq-attention`, "
        "{func}`~transformer.causal_mask`, {math}`a_{ij}` and [this](#sec-scale)."
    )
    assert text == (
        f"See [Why $\\sqrt{{d_k}}$?]({URL}attention.html#sec-scale), [the masks]({URL}masks.html), "
        f"[(2)]({URL}attention.html#equation-eq-attention), "
        f"[`causal_mask()`]({URL}api.html#transformer.causal_mask), $a_{{ij}}$ and "
        f"[this]({URL}attention.html#sec-scale)."
    )
    assert not book.warnings


def test_myst_markdown_literalinclude_becomes_the_code_it_shows():
    (text,), book = convert(
        "```{literalinclude} ../code/x.py\n:pyobject: f\n:language: python\n```"
    )
    assert text == "```python\ndef f(x):\n    return x\n```"
    assert book.includes == [("../code/x.py", {"pyobject": "f", "language": "python"})]


def test_myst_markdown_drops_targets_comments_and_equation_labels():
    (text,), _ = convert("(sec-scale)=\n## Scale\n% a note to authors\n$$\nx = 1\n$$ (eq-x)\n")
    assert text == "## Scale\n$$\nx = 1\n$$"


def test_myst_markdown_leaves_code_blocks_and_code_spans_alone():
    source = "Write `{ref}`x`` like this:\n\n```md\n{ref}`label`\n(label)=\n```"
    (text,), book = convert(source)
    assert text == source and not book.warnings


def test_myst_markdown_image_becomes_an_attachment():
    book = FakeBook()
    text, attachments = MarkdownConverter(book).convert(
        "```{figure} figure.png\n:alt: A plot\n\nThe caption.\n```"
    )
    assert text == "![A plot](attachment:figure.png)\n\nThe caption."
    assert attachments == {"figure.png": {"image/png": "iVBORw0KGgo="}}


def test_myst_markdown_definition_list_and_list_table_become_markdown():
    (text,), book = convert(
        "Query\n: what a position asks for\n\n"
        "```{list-table}\n:header-rows: 1\n\n* - mask\n  - meaning\n* - `True`\n  - may attend\n```"
    )
    assert text == (
        "- **Query**: what a position asks for\n\n"
        "| mask | meaning |\n| --- | --- |\n| `True` | may attend |"
    )
    assert not book.warnings


@pytest.mark.parametrize(
    "source",
    [
        "```{tab-set}\nx\n```",
        "{cite}`vaswani2017`",
        "{ref}`no-such-label`",
        "```{solution-end}\n```",
        "[x](missing.md)",
    ],
)
def test_myst_markdown_warns_about_what_it_cannot_convert(source):
    _, book = convert(source)
    assert book.warnings


# -- The set-up cell -------------------------------------------------------------
SETUP = setup_cell_source(
    book_url=URL,
    repository_url="https://example.org/repo",
    wheel="executable_transformer-1.0-py3-none-any.whl",
)


def run_setup_cell(monkeypatch, folder: Path, *, installed: bool, works: set[str]) -> list[str]:
    """Execute the set-up cell with pip replaced by a recorder; return what it installed."""
    calls = []

    def pip(command, *args, **kwargs):
        calls.append(command[-1])
        return subprocess.CompletedProcess(command, 0 if command[-1] in works else 1)

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(subprocess, "run", pip)
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: find_spec(name, *a) if installed or name != "transformer" else None,
    )
    monkeypatch.chdir(folder)
    exec(compile(SETUP, "setup-cell", "exec"), {})
    return calls


def test_setup_cell_does_nothing_when_transformer_is_importable(monkeypatch, tmp_path):
    assert run_setup_cell(monkeypatch, tmp_path, installed=True, works=set()) == []


def test_setup_cell_prefers_a_wheel_beside_the_notebook(monkeypatch, tmp_path):
    (tmp_path / "executable_transformer-1.0-py3-none-any.whl").touch()
    calls = run_setup_cell(
        monkeypatch,
        tmp_path,
        installed=False,
        works={"executable_transformer-1.0-py3-none-any.whl"},
    )
    assert calls == ["executable_transformer-1.0-py3-none-any.whl"]


def test_setup_cell_falls_back_from_the_site_to_the_repository(monkeypatch, tmp_path):
    calls = run_setup_cell(
        monkeypatch, tmp_path, installed=False, works={"git+https://example.org/repo"}
    )
    assert calls == [
        URL + "_downloads/executable_transformer-1.0-py3-none-any.whl",
        "git+https://example.org/repo",
    ]
    with pytest.raises(RuntimeError, match="Could not install transformer"):
        run_setup_cell(monkeypatch, tmp_path, installed=False, works=set())


def test_setup_cell_is_short_and_says_what_it_does():
    lines = SETUP.splitlines()
    assert len(lines) <= 15 and all(len(line) <= 100 for line in lines)
    assert lines[0].startswith("# Set-up: install") and not lines[1].startswith("#")


# -- jupytext round trip ---------------------------------------------------------
def cells(notebook) -> list[tuple]:
    return [(c.cell_type, c.source, json.dumps(c.metadata, sort_keys=True)) for c in notebook.cells]


# The spots where jupytext's MyST format has lost or changed metadata before:
# options written as `:tags:`, YAML blocks with nested and long values,
# Markdown cell metadata after `+++`, raw cells and a cell that is only a comment.
TRICKY_MYST = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Title

```{code-cell} ipython3
:tags: [hide-input, remove-stderr]

x = 1  # a "quoted" comment: with a colon
```

+++ {"tags": ["intro"], "slideshow": {"slide_type": "slide"}}

Text with {ref}`a-label` and $x: y$.

```{code-cell} ipython3
---
mystnb:
  image:
    alt: "A long alternative text that YAML may fold over several lines, with a
      colon: here, 'quotes', and unicode √d_k."
  figure: {caption: "A caption", name: fig-x}
tags: [hide-output]
---
print("---")
```

```{raw-cell}
raw text
```

```{code-cell} ipython3
# only a comment
```
"""


def test_jupytext_round_trip_keeps_tricky_metadata():
    first = jupytext.reads(TRICKY_MYST, "md:myst")
    again = jupytext.reads(jupytext.writes(first, "md:myst"), "md:myst")
    assert cells(again) == cells(first)
    tags = [c.metadata.get("tags") for c in first.cells]
    assert tags == [None, ["hide-input", "remove-stderr"], ["intro"], ["hide-output"], None, None]
    assert "colon: here" in first.cells[3].metadata["mystnb"]["image"]["alt"]
    assert first.cells[4].cell_type == "raw"


@pytest.mark.parametrize("name", chapters())
def test_chapter_round_trips_through_jupytext(name):
    text = (ROOT / "book" / f"{name}.md").read_text()
    first = jupytext.reads(text, "md:myst")
    again = jupytext.reads(jupytext.writes(first, "md:myst"), "md:myst")
    assert cells(again) == cells(first)
    # The notebook is built from jupytext's reading, the page from myst-nb's: they must agree.
    assert cells(first) == cells(read_myst_markdown_notebook(text))
    assert any(c.metadata.get("tags") for c in first.cells)


# -- The built notebooks and the archive ------------------------------------------
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
    assert f'"{CONF["BOOK_URL"].rstrip("/")}/"' in setup.source
    assert f"_downloads/{wheel}" in setup.source
    assert f'"git+{CONF["REPOSITORY_URL"]}"' in setup.source
    assert set(notebook.metadata) <= {"kernelspec", "language_info", "jupytext"}
    code = [c for c in notebook.cells[1:] if c.cell_type == "code"]
    assert sum(bool(c.outputs) for c in code) >= len(code) // 2


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_has_no_myst_syntax_left(notebooks, name):
    notebook = notebooks[name]
    markdown = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    leftovers = [
        kind
        for kind, pattern in LEFTOVER_MYST.items()
        if pattern.search(markdown if kind == "directive" else markdown_without_code(notebook))
    ]
    assert not leftovers, leftovers
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not re.match(r"\s*(:[\w-]+:|---\n)", cell.source), cell.source[:80]


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_links_point_at_the_hosted_book(notebooks, name):
    markdown = "\n".join(c.source for c in notebooks[name].cells if c.cell_type == "markdown")
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        assert target.startswith(("https://", "http://", "attachment:", "mailto:")), target
    book = re.escape(CONF["BOOK_URL"].rstrip("/"))
    if re.search(r"\{(ref|doc|numref|eq)\}`", (ROOT / "book" / f"{name}.md").read_text()):
        assert re.search(rf"\]\({book}/[\w/-]+\.html", markdown), "no link to the hosted book"


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_shows_the_code_the_page_shows(site, notebooks, name):
    """A literalinclude's code in the notebook is byte for byte a code block of the page."""
    page_blocks = {
        html.unescape(re.sub(r"<[^>]+>", "", block)).rstrip()
        for block in re.findall(r"<pre>(.*?)</pre>", (site / f"{name}.html").read_text(), re.S)
    }
    markdown = "\n\n".join(c.source for c in notebooks[name].cells if c.cell_type == "markdown")
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
            Path(name).relative_to(Path(ARCHIVE).stem).as_posix() for name in archive.namelist()
        }
        wheel = next(n for n in names if n.endswith(".whl"))
        requirements = archive.read(f"{Path(ARCHIVE).stem}/requirements.txt").decode()
        readme = archive.read(f"{Path(ARCHIVE).stem}/README.md").decode()
    expected = {f"{name}.ipynb" for name in chapters()} | {wheel, "requirements.txt", "README.md"}
    assert names == expected
    assert names == {p.name for p in NOTEBOOKS.iterdir()}  # what `make notebooks` writes
    assert (site / "_downloads" / wheel).is_file()
    assert f"./{wheel}" in requirements.splitlines()
    assert re.search(r"^torch\b", requirements, re.M) and "ipykernel" in requirements
    assert all(f"`{name}.ipynb`" in readme for name in chapters())
    index = (site / "index.html").read_text()
    assert f'href="_downloads/{ARCHIVE}"' in index


@pytest.mark.slow
def test_notebooks_and_archive_contain_no_machine_paths(site):
    needles = {
        str(ROOT),
        os.path.realpath(ROOT),
        str(Path.home()) + "/",
        tempfile.gettempdir() + "/",
    }
    texts = {
        p.name: p.read_text() for p in NOTEBOOKS.iterdir() if p.suffix in {".ipynb", ".md", ".txt"}
    }
    offenders = [
        f"{name}: {needle}" for name, text in texts.items() for needle in needles if needle in text
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
print("network", "open" if reachable("pypi.org", 443) or reachable("1.1.1.1", 53) else "none")"""

SOCKET_GUARD = '''"""No network in this interpreter: only loopback and Unix sockets connect."""
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
        raise socket.gaierror(-3, "Temporary failure in name resolution (no network in this test)")
    return _getaddrinfo(host, *args, **kwargs)

socket.getaddrinfo = _no_dns
'''


def installs_of_the_package(site_packages: Path) -> set[str]:
    """Names in site-packages that install `transformer`: editable (the checkout) or not."""
    names = set()
    for dist in site_packages.glob("*.dist-info"):
        direct_url = dist / "direct_url.json"
        url = json.loads(direct_url.read_text()) if direct_url.is_file() else {}
        editable = url.get("dir_info", {}).get("editable", False)
        record = (dist / "RECORD").read_text().splitlines() if (dist / "RECORD").is_file() else []
        tops = {line.split(",")[0].split("/")[0] for line in record}
        if editable or "transformer" in tops:
            names |= {dist.name} | tops
    return names


class OfflineKernel:
    """A Jupyter kernel with this environment's packages but not the checkout, and no network."""

    def __init__(self, root: Path) -> None:
        self.root = root
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        self.python = venv / "bin" / "python"
        self.site_packages = Path(
            subprocess.check_output(
                [self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
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
            and subprocess.run([*namespace, "true"], capture_output=True).returncode == 0
        ):
            self.isolation, prefix = "network namespace", namespace
        else:
            self.isolation, prefix = "socket guard", []
            (self.site_packages / "sitecustomize.py").write_text(SOCKET_GUARD)
        argv = [*prefix, str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        spec = {"argv": argv, "display_name": "Python 3 (offline)", "language": "python"}
        (root / "kernels" / "python3").mkdir(parents=True)
        (root / "kernels" / "python3" / "kernel.json").write_text(json.dumps(spec))
        (root / "ipc").mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA", "JUPYTER_PATH"))
        }

    async def run(
        self, notebook: nbformat.NotebookNode, folder: Path, name: str
    ) -> nbformat.NotebookNode:
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
            notebook, km=manager, timeout=900, resources={"metadata": {"path": str(folder)}}
        )
        return await client.async_execute(env=self.env, cleanup_kc=True)


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
    """Install the archive's wheel with the set-up cell, then run every chapter offline."""
    kernel = OfflineKernel(tmp_path_factory.mktemp("kernel"))
    unpacked = tmp_path_factory.mktemp("archive")
    with zipfile.ZipFile(site / "_downloads" / ARCHIVE) as archive:
        archive.extractall(unpacked)
    folder = unpacked / Path(ARCHIVE).stem
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

    async def run_all() -> dict:
        results = {"install": await kernel.run(with_probe(install), folder, "install")}
        slots = asyncio.Semaphore(os.cpu_count() or 1)

        async def one(name: str):
            async with slots:
                start = time.perf_counter()
                notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
                empty = Path(
                    tempfile.mkdtemp(prefix=f"{name}-", dir=tmp_path_factory.getbasetemp())
                )
                try:
                    ran = await kernel.run(with_probe(notebook), empty, name)
                except Exception as error:  # reported by that chapter's test
                    ran = error
                return name, (ran, time.perf_counter() - start, empty)

        results.update(await asyncio.gather(*(one(name) for name in chapters())))
        return results

    results = asyncio.run(run_all())
    results["kernel"] = kernel
    return results


@pytest.mark.slow
def test_setup_cell_installs_the_archive_wheel_offline(offline):
    kernel, install = offline["kernel"], offline["install"]
    before = install.cells[0].outputs[0].text.strip()
    assert before == "None", f"transformer was importable before the set-up cell: {before}"
    path, network = probe_result(install)
    assert network == "none", f"the kernel reached the network ({kernel.isolation})"
    assert path.resolve().is_relative_to(kernel.site_packages.resolve()), path
    assert not path.resolve().is_relative_to(ROOT.resolve())
    print(f"isolation: {kernel.isolation}")


class PageOutputs(HTMLParser):
    """The text outputs (stdout streams, plain text) of each code cell of a myst-nb page."""

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
    """Drop what may differ between two runs of the same code: the date, the git commit."""
    text = ANSI.sub("", text).strip("\n")
    text = re.sub(r"Outputs computed on .*? UTC", "Outputs computed on <date>", text)
    text = re.sub(r", commit [0-9a-f]+(\+dirty)?", "", text)  # a wheel is no git checkout
    return "\n".join(line.rstrip() for line in text.split("\n"))


def assert_same_outputs(page: list[list[str]], notebook: list[list[str]]) -> None:
    assert len(notebook) == len(page), "the notebook and the page have different code cells"
    for index, (on_page, in_notebook) in enumerate(zip(page, notebook)):
        assert [normalise(t) for t in in_notebook] == [
            normalise(t) for t in on_page
        ], f"code cell {index}"


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_download_shows_the_outputs_of_the_page(site, notebooks, name):
    assert_same_outputs(
        PageOutputs((site / f"{name}.html").read_text()).cells, notebook_outputs(notebooks[name])
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", chapters())
def test_notebook_runs_offline_from_the_wheel_and_prints_the_page_numbers(site, offline, name):
    ran, seconds, folder = offline[name]
    if isinstance(ran, Exception):
        raise ran
    print(f"{name}: {seconds:.1f} s")
    kernel = offline["kernel"]
    assert not ran.cells[0].outputs, "the set-up cell did something though transformer is installed"
    path, network = probe_result(ran)
    assert network == "none", f"the kernel reached the network ({kernel.isolation})"
    assert path.resolve().is_relative_to(kernel.site_packages.resolve()), path
    assert not folder.resolve().is_relative_to(ROOT.resolve())
    ran.cells.pop()  # the probe
    assert_same_outputs(
        PageOutputs((site / f"{name}.html").read_text()).cells, notebook_outputs(ran)
    )
