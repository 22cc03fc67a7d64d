"""Every chapter page links its notebook, the package's wheel, the zip of all
notebooks and Colab, and every one of those links leads somewhere.

The links are read in Chromium from the page's header menus (download and
launch), as a reader finds them; local targets are fetched from the served
site; the Colab link must have the form Colab opens
(``https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>``)
and name the notebook that the Pages workflow publishes on that branch.
"""

import re
import runpy
import zipfile
from urllib.parse import urlparse

import pytest

from browser_support import open_page
from conftest import ROOT, chapters
from test_browser import base_url, browser  # noqa: F401 (fixtures: one Chromium per module)

pytestmark = pytest.mark.browser

CONF = runpy.run_path(str(ROOT / "conf.py"))
MENU_LINKS = """() => [...document.querySelectorAll(
  ".dropdown-download-buttons a[href], .dropdown-launch-buttons a[href]")]
  .map(a => a.href)"""
COLAB = "https://colab.research.google.com/"


@pytest.fixture(scope="module")
def menus(browser, base_url) -> dict[str, list[str]]:  # noqa: F811 (the imported fixtures)
    """The absolute URLs in each chapter page's download and launch menus."""
    found = {}
    for name in chapters():
        with open_page(browser, f"{base_url}{name}.html") as page:
            found[name] = page.evaluate(MENU_LINKS)
    return found


@pytest.mark.parametrize("name", chapters())
def test_chapter_menus_link_notebook_wheel_zip_and_colab(menus, base_url, name):  # noqa: F811
    links = menus[name]
    local = [url.removeprefix(base_url) for url in links if url.startswith(base_url)]
    assert [p for p in local if p.endswith(".ipynb")] == [f"_sources/{name}.ipynb"], (
        links
    )
    assert (
        len([p for p in local if p.startswith("_downloads/") and p.endswith(".whl")])
        == 1
    )
    assert [p for p in local if p.endswith(".zip")] == [
        "_downloads/executable-transformer-notebooks.zip"
    ]
    assert not [p for p in local if p.endswith((".md", ".txt"))], (
        "the MyST source is offered"
    )
    (colab,) = [url for url in links if url.startswith(COLAB)]
    owner, repository = urlparse(CONF["REPOSITORY_URL"]).path.strip("/").split("/")
    form = re.fullmatch(
        rf"https://colab\.research\.google\.com/github/{owner}/{repository}/blob/"
        rf"(?P<branch>[\w.-]+)/{name}\.ipynb",
        colab,
    )
    assert form, colab
    pages = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert f"refs/heads/{form['branch']}" in pages, (
        "the Pages workflow does not publish there"
    )
    assert set(links) == {base_url + p for p in local} | {colab}, (
        "a link to another host"
    )


@pytest.mark.parametrize("name", chapters())
def test_chapter_menu_link_targets_exist(menus, browser, base_url, site, name):  # noqa: F811
    for url in menus[name]:
        if url.startswith(COLAB):
            # What the Pages workflow publishes on the branch Colab opens.
            published = ROOT / "_build" / "notebooks" / url.rsplit("/", 1)[1]
            assert (
                published.read_bytes()
                == (site / "_sources" / f"{name}.ipynb").read_bytes()
            )
            continue
        path = url.removeprefix(base_url)
        assert (site / path).is_file(), path
        response = browser.request.get(url)
        assert response.status == 200, f"HTTP {response.status} {url}"
        if path.endswith(".zip"):
            names = {
                n.rsplit("/", 1)[1] for n in zipfile.ZipFile(site / path).namelist()
            }
            wheels = {p.rsplit("/", 1)[1] for p in menus[name] if p.endswith(".whl")}
            assert {f"{name}.ipynb", *wheels} <= names, (
                "the zip lacks the page's notebook or wheel"
            )
