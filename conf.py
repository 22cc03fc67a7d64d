"""Sphinx configuration of The Executable Transformer.

Build with ``make html`` (or ``sphinx-build -M html book _build -c .``).
Paths here resolve from this folder (the repository root); note that
``exclude_patterns`` resolves from ``book/``, the source folder.
"""

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))

# Sphinx and every kernel (which inherits PYTHONPATH) import this checkout's
# code/transformer, whatever else the environment has installed.
CODE = str(ROOT / "code")
sys.path.insert(0, CODE)
_others = [
    p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p not in ("", CODE)
]
os.environ["PYTHONPATH"] = os.pathsep.join([CODE, *_others])
from package_cache import check_package_source  # noqa: E402

check_package_source(ROOT / "code")

# jupyter-cache's truncate_caches reads the records to keep and those to delete
# in two queries. Under -j auto, a chapter that another process caches between
# the two is taken for an old record and deleted while it is being written
# (KeyError: "Notebook file does not exist for cache record"). The book keeps
# far fewer notebooks than the limit, so truncate only once past it.
from jupyter_cache.cache.main import JupyterCacheBase  # noqa: E402

_truncate_caches = JupyterCacheBase.truncate_caches


def _truncate_past_the_limit(cache: JupyterCacheBase) -> None:
    if len(cache.list_cache_records()) > cache.get_cache_limit():
        _truncate_caches(cache)


JupyterCacheBase.truncate_caches = _truncate_past_the_limit

# When a chapter has run, its kernel has nothing left to save: stop it at once.
# nbclient's default, a graceful shutdown, took about 0.7 s more per chapter
# (measured here with torch and matplotlib loaded), on every chapter of a cold
# build.
import jupyter_cache.executors.utils as _jc_utils  # noqa: E402

_executenb = _jc_utils.executenb


def _executenb_stop_at_once(nb, **kwargs):
    return _executenb(nb, shutdown_kernel="immediate", **kwargs)


_jc_utils.executenb = _executenb_stop_at_once

# Under -j, Sphinx splits the sorted pages into chunks of equal count, and a
# process reads one chunk at a time. The chapters that train take most of a cold
# build (the ablation alone a quarter), so equal counts are far from equal work.
# Instead, one chunk per process, each page going to the chunk with the least
# work so far, longest first. READ_SECONDS is what a page took to read in a cold
# build (its chapter's run; api's autodoc), as last measured; any other page
# counts as 4 s. A stale table costs time, never correctness.
import sphinx.builders as _sphinx_builders  # noqa: E402

READ_SECONDS = {
    "ablation": 64, "language_model": 42, "training": 29, "decoder_only": 18,
    "mistakes": 10, "real_checkpoints": 10, "attention_cost": 10, "add_norm": 9,
    "flash_attention": 8, "api": 6, "kv_cache": 6, "multihead": 6, "positional": 5,
    "attention": 5, "index": 0,
}  # fmt: skip


def _balanced_chunks(docnames, nproc, maxbatch=10):
    chunks, work = [[] for _ in range(nproc)], [0] * nproc
    for name in sorted(docnames, key=lambda d: -READ_SECONDS.get(d, 4)):
        lightest = work.index(min(work))
        chunks[lightest].append(name)
        work[lightest] += READ_SECONDS.get(name, 4)
    return [chunk for chunk in chunks if chunk]


_sphinx_builders.make_chunks = _balanced_chunks

# -- Project ------------------------------------------------------------------
project = "The Executable Transformer"
author = "The Executable Transformer contributors"
copyright = "2026, The Executable Transformer contributors"
language = "en"

# -- Where the book lives: the one place for both addresses ----------------------
# The hosted site and the repository. The pages (canonical links, the theme's
# repository button), the notebooks (links, set-up cell: git+REPOSITORY_URL at
# the built commit) and the "Open in Colab" links all read these two.
# A fork sets both to its own: BOOK_URL where its Pages workflow publishes
# (https://<owner>.github.io/<repository>/), REPOSITORY_URL its GitHub address,
# where the Pages workflow also pushes the `notebooks` branch that Colab opens.
BOOK_URL = "https://executable-transformer.github.io/book/"
REPOSITORY_URL = "https://github.com/executable-transformer/book"

# -- Extensions ---------------------------------------------------------------
extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",
    "sphinx_togglebutton",
    "sphinx_exercise",
    "package_cache",  # re-run chapters when code/transformer changes
    "cell_outputs",  # failing cells and warnings reported; output merged exactly
    "notebook_download",  # stand-alone .ipynb downloads, and a zip of them all
    "listing_captions",  # every listing of package code names its file and object
]

exclude_patterns = [
    "_ext",
    "_static",
    "_templates",
    "**.ipynb_checkpoints",
    "jupyter_execute",
]
nitpicky = True
suppress_warnings: list[str] = []

# `make chapter CH=name` builds the index and that one chapter only, for a
# quick look while writing it; links to the other chapters then go nowhere.
ONLY_CHAPTER = os.environ.get("BOOK_ONLY_CHAPTER")
if ONLY_CHAPTER:
    if not (ROOT / "book" / f"{ONLY_CHAPTER}.md").is_file():
        raise ValueError(f"BOOK_ONLY_CHAPTER: no chapter book/{ONLY_CHAPTER}.md")
    exclude_patterns += [
        p.name
        for p in (ROOT / "book").glob("*.md")
        if p.stem not in {"index", ONLY_CHAPTER}
    ]
    suppress_warnings += [
        "toc.excluded",
        "toc.not_readable",
        "ref",
        "notebook.solution",
    ]

# -- MyST and notebook execution ------------------------------------------------
myst_enable_extensions = [
    "dollarmath",
    "amsmath",
    "colon_fence",
    "deflist",
    "substitution",
]
# The index links the PDF where the hosted site publishes it (the Pages
# workflow runs `make pdf`), so that the link works in a local build too.
PDF_URL = f"{BOOK_URL}executable-transformer.pdf"
myst_substitutions = {"pdf_link": f"[executable-transformer.pdf]({PDF_URL})"}
myst_heading_anchors = 3

nb_execution_mode = "cache"
# A failing cell is reported by book/_ext/cell_outputs.py (chapter, cell,
# source, traceback) and fails the build; raising instead would lose that
# report in a parallel worker. A cell tagged `allow-warnings` may show a warning.
nb_execution_raise_on_error = False
nb_execution_show_tb = False
nb_execution_timeout = 300
nb_merge_streams = True
# The default loads require.js and the widget manager from CDNs; no page needs them.
nb_ipywidgets_js = {}
package_cache_watch = "code/transformer"

# -- Downloadable notebooks (book/_ext/notebook_download.py) ---------------------
# Every chapter as a stand-alone .ipynb, made from the parsed page, whose first
# cell installs the package from the wheel beside it or the repository;
# _downloads/ holds the wheel and a zip of all notebooks. Links in the
# notebooks point at the hosted book.
notebook_book_url = BOOK_URL
notebook_repository_url = REPOSITORY_URL

# -- API reference (autodoc + napoleon) -----------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Signatures show defaults as written (sequence_loss, not <function ...>).
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# -- HTML ---------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = project
# MathJax 3 is served from the site, so math renders with no network: the files
# of sphinx-mathjax-offline (whose own extension is not parallel-safe).
_MATHJAX = importlib.util.find_spec(
    "sphinx-mathjax-offline"
)  # a folder name with dashes
html_static_path = ["book/_static", str(Path(_MATHJAX.origin).parent / "static")]
mathjax_path = "mathjax/tex-chtml.js"
html_css_files = ["book.css"]
html_show_sourcelink = True
html_copy_source = True
html_baseurl = BOOK_URL
html_favicon = (
    "book/_static/favicon.svg"  # else browsers ask for /favicon.ico and get a 404
)
# pydata-sphinx-theme reads the colour mode from here; left empty, a fresh
# browser profile logs "Got invalid theme mode" as a console error.
html_context = {"default_mode": "auto"}
html_theme_options = {
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "repository_url": REPOSITORY_URL,
    "repository_branch": "main",
    "path_to_docs": "book",
    "use_repository_button": True,
}

# -- API reference (book/api.md): additions ---------------------------------------
# The signatures name torch, matplotlib and standard-library types. Their own
# documentation is not part of this offline build (no intersphinx), so
# nitpicky mode is told not to look for it.
nitpick_ignore_regex = [
    ("py:class", r"(torch|nn|matplotlib|collections\.abc)\..*"),
]
# A docstring's "Shape:" section (not a napoleon section) splits its fields in
# two lists; with the default target, autodoc would list every parameter's
# type again under "Raises:". Add types only where a parameter is described.
autodoc_typehints_description_target = "documented"

# -- The attention explorer and the printed book (issue #15) ---------------------
# attention-explorer.js draws every `.attention-explorer` that a chapter's cell
# exported (transformer.tools.explorer); print.css styles the page for `make pdf`
# and for a reader's own printing.
html_css_files += [
    "attention-explorer.css",
    "accessibility.css",
    ("print.css", {"media": "print"}),
]
html_js_files = [("attention-explorer.js", {"defer": "defer"})]
extensions += ["print_book"]  # `make pdf` prints the singlehtml build
