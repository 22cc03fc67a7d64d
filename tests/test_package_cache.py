"""The execution cache follows the package's state (book/_ext/package_cache.py).

The slow tests build a two-chapter copy of the book (tests/book_support.py)
in a temporary folder, in parallel as `make html` does. Each chapter prints a
new run id whenever it really executes, so a page's id tells whether its
chapter ran or came from the cache.
"""

import fcntl
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from package_cache import LOCK, prune  # book/_ext, on the path from conftest.py

from book_support import RUN_ID, build, chapter, make_book, run_ids

PROBES = ["probe_a", "probe_b"]


def _book(tmp_path, *extra_cells):
    # Distinct code per chapter: jupyter-cache keys chapters on their code cells.
    chapters = {
        name: chapter(name, f"{RUN_ID}  # {name}", *extra_cells) for name in PROBES
    }
    return make_book(tmp_path, chapters)


def _change_package(project):
    module = project / "code" / "transformer" / "parts" / "masks.py"
    original = module.read_text()
    module.write_text(original + "# a one-line change\n")
    return lambda: module.write_text(original)


@pytest.mark.slow
def test_package_edit_reexecutes_and_revert_reuses_cache(tmp_path):
    project = _book(tmp_path)
    html = project / "_build" / "html"
    build(project)
    first = run_ids(html, PROBES)
    build(project)
    assert run_ids(html, PROBES) == first, (
        "an unchanged book must reuse the cached outputs"
    )

    revert = _change_package(project)
    build(project)
    edited = run_ids(html, PROBES)
    for name in PROBES:
        assert edited[name] != first[name], (
            f"{name} was not re-executed after the package changed"
        )

    revert()
    build(project)
    assert run_ids(html, PROBES) == first, (
        "after the revert, the chapters must not run again"
    )
    assert len(list((project / "_build" / ".jupyter_cache").iterdir())) == 2


@pytest.mark.slow
def test_chapter_that_reads_the_book_reruns_when_any_page_changes(tmp_path):
    # probe_a trains on the book's pages (it calls book_chapters()); probe_b does not.
    reader = f"{RUN_ID}  # probe_a\nfrom transformer import book_chapters\n"
    reader += "print(len(book_chapters()))"
    chapters = {
        "probe_a": chapter("probe_a", reader),
        "probe_b": chapter("probe_b", f"{RUN_ID}  # probe_b"),
    }
    project = make_book(tmp_path, chapters)
    html = project / "_build" / "html"
    build(project)
    first = run_ids(html, PROBES)

    page = project / "book" / "probe_b.md"
    page.write_text(page.read_text() + "\nA new sentence in the prose.\n")
    build(project)
    edited = run_ids(html, PROBES)
    assert edited["probe_a"] != first["probe_a"], (
        "the chapter that reads the book kept outputs of the old text"
    )
    assert edited["probe_b"] == first["probe_b"], "a prose edit re-ran its code"
    build(project)
    assert run_ids(html, PROBES) == edited, "an unchanged book ran a chapter again"


@pytest.mark.slow
def test_builds_at_two_package_states_run_at_once(tmp_path):
    """A build at another package state starts while the first one executes.

    The second project is a copy with a changed package whose build writes
    into the first one's _build/live, as `make livehtml` writes beside
    `make html`: both use one execution cache folder, _build/.jupyter_cache.
    """
    first = _book(tmp_path / "first", "import time\ntime.sleep(4)")
    second = _book(tmp_path / "second", "import time\ntime.sleep(4)")
    _change_package(second)
    caches = first / "_build" / ".jupyter_cache"
    with ThreadPoolExecutor(1) as pool:
        started = pool.submit(build, first, check=False)
        deadline = time.monotonic() + 60
        while (
            not (caches.is_dir() and any(caches.iterdir()))
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        build(second, out=first / "_build" / "live")
        result = started.result()
    assert result.returncode == 0, result.stdout[-6000:]
    assert len(list(caches.iterdir())) == 2


def test_prune_keeps_recent_and_in_use_caches(tmp_path):
    folders = [tmp_path / f"state{i}" for i in range(6)]
    for age, folder in enumerate(reversed(folders)):
        folder.mkdir()
        (folder / LOCK).touch()
        os.utime(
            folder, (time.time() - 100 * age,) * 2
        )  # state0 oldest ... state5 newest
    with open(folders[0] / LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # another build is using the oldest state
        prune(tmp_path, keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "state0",
        "state3",
        "state4",
        "state5",
    ]
