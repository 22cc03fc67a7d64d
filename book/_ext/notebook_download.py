"""Offer every chapter as a stand-alone notebook, with the package's wheel, a zip and
Colab (``conf.py`` sets ``notebook_book_url`` and ``notebook_repository_url``).

Runs once the HTML build has finished, in the main process (so safe with ``-j``),
from the doctrees Sphinx resolved. Everything is staged in a new folder and moved
into place file by file: another build may be publishing into the same folder.
No page offers its MyST source, which does not run on its own.
"""

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from string import Template
from urllib.parse import urlparse

import nbformat
from doctree_notebook import doctree_cells
from package_cache import package_hash, prune
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging
from standalone_notebook import setup_cell_source, standalone_notebook

logger = logging.getLogger(__name__)

ARCHIVE = "executable-transformer-notebooks.zip"
NOTEBOOK_BRANCH = "notebooks"
RECIPE = ("<!-- notebook-recipe: start -->", "<!-- notebook-recipe: end -->")
# The zip's README.md, filled in by _stage.
README = Template(Path(__file__).with_name("notebooks_README.md").read_text())
# pip builds the wheel offline (so without its version check), from the copies alone.
PIP_WHEEL = "-m pip wheel --no-deps --no-build-isolation --no-index --quiet".split()


def cached_wheel(root: Path, package: Path, cache: Path, keep: int = 4) -> Path:
    """Return the wheel of the project at ``root`` as it is now, built into ``cache``
    if new (RuntimeError if pip fails); ``cache`` keeps the ``keep`` newest states."""
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
        source, dist = Path(tmp, "project"), Path(tmp, "dist")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(package, source / package.relative_to(root), ignore=ignore)
        # The wheel also carries the chapters (transformer.book_chapters reads them).
        (source / "book").mkdir()
        files = [root / "pyproject.toml", root / "README.md", *root.glob("book/*.md")]
        for path in files:
            shutil.copyfile(path, source / path.relative_to(root))
        # The state: every file copied, the package's included.
        folder = cache / package_hash(source)[:32]
        if not folder.is_dir():
            command = [sys.executable, *PIP_WHEEL, "--wheel-dir", dist, source]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0 or len(list(dist.glob("*.whl"))) != 1:
                raise RuntimeError(
                    f"pip wheel failed (is setuptools installed?):\n{result.stderr}"
                )
            # A concurrent build at this state may have been first.
            with contextlib.suppress(OSError):
                dist.rename(folder)
    os.utime(folder)  # most recently used
    prune(cache, keep)
    return next(folder.glob("*.whl"))


def archive_requirements(root: Path, project: dict, wheel: str) -> str:
    """Return the archive's ``requirements.txt``: the package's dependencies and
    extras (pinned as in ``root``'s, the versions that computed the outputs),
    ipykernel, the wheel."""

    pinned = {}
    for line in (root / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            pinned[canonicalize_name(Requirement(line).name)] = line
    extras = [r for e in project.get("optional-dependencies", {}).values() for r in e]
    wanted = [*project["dependencies"], *extras, "ipykernel"]
    lines = [pinned.get(canonicalize_name(Requirement(r).name), r) for r in wanted]
    header = "# What the notebooks need; README.md says how to install it."
    return "\n".join([header, *lines, f"./{wheel}", ""])


def place(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` through a new file: no reader sees half of it.
    A folder is zipped, its files under a top folder named like ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}-{os.getpid()}")
    if source.is_dir():
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(source.iterdir()):
                archive.write(path, Path(target.stem) / path.name)
    else:
        shutil.copyfile(source, partial)
    partial.replace(target)


def executed_notebook(app: Sphinx, docname: str) -> Path:
    """Return the page's notebook with its outputs (``cell_outputs`` saves it)."""
    return Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"


def chapters(app: Sphinx) -> list[str]:
    """Return the pages that are notebooks (myst-nb executed them), in reading order."""
    env = app.env
    order = dict.fromkeys(
        [*env.toctree_includes.get(app.config.root_doc, []), *sorted(env.found_docs)]
    )
    return [doc for doc in order if executed_notebook(app, doc).is_file()]


def colab_url(repository_url: str, docname: str) -> str | None:
    """Return the Colab address of a chapter's published notebook (None off GitHub)."""
    url = urlparse(repository_url)
    repository = url.path.strip("/").removesuffix(".git")
    if url.netloc != "github.com" or repository.count("/") != 1:
        return None
    return f"https://colab.research.google.com/github/{repository}/blob/{NOTEBOOK_BRANCH}/{docname}.ipynb"


def built_from(root: Path, repository_url: str) -> str | None:
    """Return ``git+<repository>@<tag or commit>`` of the checkout ``root``, if any."""
    for command in (["describe", "--tags", "--exact-match"], ["rev-parse", "HEAD"]):
        result = subprocess.run(
            ["git", *command], cwd=root, capture_output=True, text=True
        )
        if result.returncode == 0:
            return f"git+{repository_url}@{result.stdout.strip()}"
    return None


def recipe(readme: Path) -> str:
    """Return the lines of ``readme`` between the notebook-recipe markers."""
    text = readme.read_text()
    if not all(marker in text for marker in RECIPE):
        raise ConfigError(f"{readme.name} lost its markers {RECIPE}")
    return text.split(RECIPE[0], 1)[1].split(RECIPE[1], 1)[0].strip()


def _on_builder_inited(app: Sphinx) -> None:
    config = app.config
    for name in ("notebook_book_url", "notebook_repository_url"):
        if not config[name].startswith("https://"):
            raise ConfigError(f"{name} must be an https:// address (set it in conf.py)")
    if app.builder.format == "html":
        root, cache = Path(app.confdir), Path(app.outdir).parent / ".wheel_cache"
        package, keep = root / config.package_cache_watch, config.package_cache_keep
        app.notebook_wheel = cached_wheel(root, package, cache, keep)


def _on_page_context(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Give a chapter's download menu its notebook, the wheel and the zip; add Colab."""
    chapter = doctree is not None and executed_notebook(app, pagename).is_file()
    buttons = context.get("header_buttons", [])

    def link(url: str, text: str, icon: str, tooltip: str) -> dict:
        url = url if "://" in url else context["pathto"](url, 1)
        label = f"{text.strip('.').split()[-1].lower()}-button"
        return dict(
            type="link", url=url, text=text, icon=icon, tooltip=tooltip, label=label
        )

    wheel = f"_downloads/{app.notebook_wheel.name}"
    downloads = [
        link(f"_sources/{pagename}.ipynb", ".ipynb", "fas fa-code", "This notebook"),
        link(wheel, ".whl", "fas fa-box", "The package (put it beside the notebook)"),
        link(f"_downloads/{ARCHIVE}", ".zip", "fas fa-file-zipper", "Every notebook"),
    ]
    for group in buttons:
        if group.get("label") == "download-buttons":
            pdf = [b for b in group["buttons"] if "pdf" in b["label"]]
            group["buttons"] = (downloads if chapter else []) + pdf
    colab = chapter and colab_url(app.config.notebook_repository_url, pagename)
    if colab:
        logo = "_static/images/logo_colab.png"
        button = link(colab, "Open in Colab", logo, "Run it in Colab")
        group = dict(type="group", tooltip="Run this chapter", icon="fas fa-rocket")
        buttons.insert(0, {**group, "buttons": [button], "label": "launch-buttons"})


def _stage(app: Sphinx, staging: Path) -> list[str]:
    """Write notebooks, wheel, requirements and README to ``staging``; return names."""
    config, env, root = app.config, app.env, Path(app.confdir)
    book_url = config.notebook_book_url.rstrip("/") + "/"
    wheel = Path(shutil.copy(app.notebook_wheel, staging)).name
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    requires = SpecifierSet(project["requires-python"])
    oldest = next(s.version for s in requires if s.operator == ">=")
    python = Version(oldest).release[:2]  # the oldest Python supported
    fallback = built_from(root, config.notebook_repository_url)
    zip_url = f"{book_url}_downloads/{ARCHIVE}"
    setup = setup_cell_source(
        wheel=wheel, python=python, zip_url=zip_url, fallback=fallback
    )
    docnames = chapters(app)
    for docname in docnames:
        executed = nbformat.read(executed_notebook(app, docname), as_version=4)
        cells = doctree_cells(
            env.get_and_resolve_doctree(docname, app.builder),
            executed,
            page_url=f"{book_url}{docname}.html",
            fignumbers=env.toc_fignumbers.get(docname, {}),
            warn=functools.partial(logger.warning, location=docname),
        )
        nbformat.write(
            standalone_notebook(cells, executed, setup), staging / f"{docname}.ipynb"
        )
    (staging / "requirements.txt").write_text(
        archive_requirements(root, project, wheel)
    )
    contents = [f"- `{doc}.ipynb`: {env.titles[doc].astext()}" for doc in docnames]
    contents += [f"- `{wheel}`: the `transformer` package"]
    contents += ["- `requirements.txt`: what the notebooks import"]
    values = dict(project=config.project, book_url=book_url, python="%d.%d" % python)
    values.update(contents="\n".join(contents), recipe=recipe(root / "README.md"))
    values.update(repository=config.notebook_repository_url)
    (staging / "README.md").write_text(README.substitute(values))
    return [f"{doc}.ipynb" for doc in docnames]


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir, build = Path(app.outdir), Path(app.outdir).parent
    downloads, wheel = outdir / "_downloads", app.notebook_wheel
    staging = Path(tempfile.mkdtemp(dir=build, prefix=".notebooks-"))
    try:
        staging.chmod(0o755)
        names = _stage(app, staging)
        for name in names:
            place(staging / name, outdir / "_sources" / name)
        place(wheel, downloads / wheel.name)
        for old in set(downloads.glob("*.whl")) - {downloads / wheel.name}:
            old.unlink(missing_ok=True)
        place(staging, downloads / ARCHIVE)
        shutil.rmtree(build / "notebooks", ignore_errors=True)
        # Another build may have swapped its notebooks in meanwhile.
        with contextlib.suppress(OSError):
            staging.rename(build / "notebooks")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info(
        "notebooks: %d chapters in notebooks/ and _downloads/%s", len(names), ARCHIVE
    )


def setup(app: Sphinx) -> dict:
    app.add_config_value("notebook_book_url", "", "html", str)
    app.add_config_value("notebook_repository_url", "", "html", str)
    app.connect("builder-inited", _on_builder_inited)
    # After the theme's handler (priority 501).
    app.connect("html-page-context", _on_page_context, priority=502)
    app.connect("build-finished", _on_build_finished)
    # A new env_version re-reads (and so re-writes) every page: all get the new buttons.
    return {"env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
