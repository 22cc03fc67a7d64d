"""Offer every chapter as a stand-alone notebook, with the package's wheel, a zip and Colab.

At the end of an HTML build (``build-finished``, in the main process, so safe
with ``-j``) this extension writes

1. the package's wheel (cached per package state, ``notebook_archive``) to
   ``_downloads/``;
2. each chapter's notebook, made from the doctree Sphinx resolved for its page
   (``doctree_notebook``) and the outputs myst-nb computed, behind a set-up
   cell (``standalone_notebook``), to ``<build>/notebooks/<page>.ipynb`` and
   ``_sources/<page>.ipynb``;
3. the zip of ``<build>/notebooks/``: the notebooks, the wheel, a
   ``requirements.txt`` and a ``README.md`` whose recipe is the repository
   README's (between the ``notebook-recipe`` markers; ``book/index.md``
   includes the same lines).

Each chapter page's download menu offers its notebook, the wheel and the zip
(not the MyST source, which does not run on its own), and an "Open in Colab"
button opens the notebook the Pages workflow pushes to the repository's
``notebooks`` branch.

Configuration (``conf.py``): ``notebook_book_url`` and
``notebook_repository_url``, the hosted book and its repository on GitHub.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import nbformat
from jupyter_cache import get_cache
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.util import logging

from doctree_notebook import doctree_cells, inline_markdown
from notebook_archive import (
    archive_requirements, cached_wheel, partial_file, requires_python, write_archive
)
from standalone_notebook import setup_cell_source, standalone_notebook

logger = logging.getLogger(__name__)

NOTEBOOK_FOLDER = "notebooks"
ARCHIVE = "executable-transformer-notebooks.zip"
NOTEBOOK_BRANCH = "notebooks"  # where .github/workflows/pages.yml pushes the notebooks
WHEEL_CACHE = ".wheel_cache"
RECIPE = ("<!-- notebook-recipe: start -->", "<!-- notebook-recipe: end -->")


def executed_notebook(app: Sphinx, docname: str) -> Path:
    """Return where myst-nb writes the executed notebook of a page."""
    return Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"


def executed_outputs(app: Sphinx, docname: str) -> nbformat.NotebookNode:
    """Return the executed notebook of a page, with the outputs the page shows.

    In cache mode myst-nb writes ``jupyter_execute/<page>.ipynb`` without the
    outputs that came from the cache, so take them from jupyter-cache, as the page did.
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


def colab_url(repository_url: str, docname: str) -> str | None:
    """Return the Colab address of a chapter's published notebook (None off GitHub)."""
    url = urlparse(repository_url)
    if url.netloc != "github.com" or len(url.path.strip("/").split("/")) != 2:
        return None
    repository = url.path.strip("/").removesuffix(".git")
    return f"https://colab.research.google.com/github/{repository}/blob/{NOTEBOOK_BRANCH}/{docname}.ipynb"


def built_from(root: Path, repository_url: str) -> str | None:
    """Return ``git+<repository>@<tag or commit>`` of the checkout at ``root``, if it is one."""
    for command in (["describe", "--tags", "--exact-match"], ["rev-parse", "HEAD"]):
        result = subprocess.run(["git", *command], cwd=root, capture_output=True, text=True)
        if result.returncode == 0:
            return f"git+{repository_url}@{result.stdout.strip()}"
    return None


def recipe(readme: Path) -> str:
    """Return the lines of ``readme`` between the notebook-recipe markers."""
    text = readme.read_text()
    if not all(marker in text for marker in RECIPE):
        raise ConfigError(f"{readme.name} lost its markers {RECIPE}")
    return text.split(RECIPE[0], 1)[1].split(RECIPE[1], 1)[0].strip()


def _on_config_inited(app: Sphinx, config: Config) -> None:
    for name in ("notebook_book_url", "notebook_repository_url"):
        if not config[name].startswith("https://"):
            raise ConfigError(f"{name} must be an https:// address (set it in conf.py)")


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        root = Path(app.confdir)
        package = root / app.config.package_cache_watch
        app.notebook_wheel = cached_wheel(root, package, Path(app.outdir).parent / WHEEL_CACHE)


def _on_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is not None and executed_notebook(app, pagename).is_file():
        context["ipynb_source"] = f"{pagename}.ipynb"  # the theme's .ipynb download


def _on_header_buttons(app: Sphinx, pagename: str, templatename: str, context, doctree) -> None:
    """Drop the MyST-source download; on chapters add the wheel, the zip and Colab."""
    chapter = "ipynb_source" in context
    pathto, buttons = context["pathto"], context.get("header_buttons", [])
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"] = [b for b in group["buttons"] if b["label"] != "download-source-button"]
            wheel = app.notebook_wheel.name
            group["buttons"][1:1] = [
                {"type": "link", "url": pathto(f"_downloads/{wheel}", 1), "text": ".whl",
                 "tooltip": "Download the package (put it beside the notebook)",
                 "icon": "fas fa-box", "label": "download-wheel-button"},
                {"type": "link", "url": pathto(f"_downloads/{ARCHIVE}", 1), "text": ".zip",
                 "tooltip": "Download every notebook, the package and how to run them",
                 "icon": "fas fa-file-zipper", "label": "download-zip-button"},
            ] if chapter else []
    colab = colab_url(app.config.notebook_repository_url, pagename)
    if chapter and colab:
        button = {"type": "link", "url": colab, "text": "Colab", "label": "colab-button",
                  "tooltip": "Open this chapter in Google Colab",
                  "icon": "_static/images/logo_colab.png"}
        buttons.insert(0, {"type": "group", "tooltip": "Run this chapter", "icon": "fas fa-rocket",
                           "buttons": [button], "label": "launch-buttons"})


def _stage(app: Sphinx, staging: Path) -> list[str]:
    """Write the notebooks, the wheel, requirements and README into ``staging``."""
    config, env = app.config, app.env
    book_url = config.notebook_book_url.rstrip("/") + "/"
    wheel = Path(shutil.copy(app.notebook_wheel, staging))
    setup = setup_cell_source(
        wheel=wheel.name,
        python=requires_python(wheel),
        fallback=built_from(Path(app.confdir), config.notebook_repository_url),
        zip_url=f"{book_url}_downloads/{ARCHIVE}",
    )
    listing = []
    for docname in chapters(app):
        executed = executed_outputs(app, docname)
        cells = doctree_cells(
            env.get_and_resolve_doctree(docname, app.builder),
            executed,
            page_url=f"{book_url}{docname}.html",
            srcdir=Path(app.srcdir),
            fignumbers=env.toc_fignumbers.get(docname, {}),
            warn=lambda message, doc=docname: logger.warning(
                "notebook: %s", message, location=doc, type="notebook"
            ),
        )
        path = staging / f"{docname}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(standalone_notebook(cells, executed, setup), path)
        listing.append(f"- `{path.name}`: {inline_markdown(env.titles[docname])}")
    (staging / "requirements.txt").write_text(
        archive_requirements(wheel, Path(app.confdir) / "requirements.txt")
    )
    (staging / "README.md").write_text(
        f"# {config.project}: the notebooks\n\n"
        f"Every chapter of [{config.project}]({book_url}) as a Jupyter notebook, with the\n"
        "outputs computed when the book was built, and the package the chapters import.\n\n"
        f"## Run them\n\nWith Python {'.'.join(map(str, requires_python(wheel)))} or newer, "
        f"in this folder:\n\n{recipe(Path(app.confdir) / 'README.md')}\n\n## Contents\n\n"
        + "\n".join([*listing, f"- `{wheel.name}`: the `transformer` package",
                     "- `requirements.txt`: what the notebooks import"])
        + f"\n\nThe source of the book and of the package: {config.notebook_repository_url}\n"
    )
    return [line.split("`")[1] for line in listing]


def _put(source: Path, target: Path) -> None:
    """Copy a file into place so that no reader sees half of it."""
    partial = partial_file(target)
    shutil.copyfile(source, partial)
    partial.replace(target)


def _publish(app: Sphinx) -> None:
    outdir, build = Path(app.outdir), Path(app.outdir).parent
    # Written to a new folder first: another build (make chapter, a second
    # make html) may be publishing into the same build folder.
    staging = Path(tempfile.mkdtemp(dir=build, prefix=f".{NOTEBOOK_FOLDER}-"))
    staging.chmod(0o755)
    try:
        names = _stage(app, staging)
        for name in names:
            _put(staging / name, outdir / "_sources" / name)
        downloads = outdir / "_downloads"
        for old in downloads.glob("*.whl"):
            old.unlink(missing_ok=True)
        _put(app.notebook_wheel, downloads / app.notebook_wheel.name)
        write_archive(staging, downloads / ARCHIVE)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    folder = build / NOTEBOOK_FOLDER
    for attempt in range(5):  # another build may swap its folder in meanwhile
        old = staging.with_name(f"{staging.name}-old{attempt}")
        try:
            if folder.exists():
                folder.rename(old)
            staging.rename(folder)
            break
        except OSError:
            continue
        finally:
            shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)
    logger.info("notebooks: %d chapters in %s/ and _downloads/%s", len(names), NOTEBOOK_FOLDER, ARCHIVE)


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _publish(app)


def setup(app: Sphinx) -> dict:
    app.add_config_value("notebook_book_url", "", "html", str)
    app.add_config_value("notebook_repository_url", "", "html", str)
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited)
    # Around sphinx-book-theme's header buttons (priority 501).
    app.connect("html-page-context", _on_page_context, priority=450)
    app.connect("html-page-context", _on_header_buttons, priority=502)
    app.connect("build-finished", _on_build_finished)
    # env_version: a new version re-reads every page, so every page gets the new buttons.
    return {"env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
