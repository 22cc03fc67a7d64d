"""Look at the built site the way readers do: in a real browser.

One headless Chromium serves the whole session; the site (`make html`, via the
`site` fixture) is served on 127.0.0.1 by a server these tests start and stop.
Every page is loaded once and everything it did is recorded; the tests below
then check those records, and a few more views (search, the download-all
archive, dark mode, a phone) load the pages they need again.
"""

import io
import os
import re
import shutil
import zipfile
from html import unescape
from urllib.parse import urljoin

import nbformat
import pytest

from browser_support import (
    INSTALL_HINT,
    WIDE_ELEMENTS,
    chromium_path,
    launch,
    open_page,
    serve,
    visit,
)
from conftest import chapters

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# A figure's background counts as light from this luminance (0-255) up.
LIGHT = 200


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A headless Chromium with a fresh profile, shared by every browser test.

    Module-scoped: Playwright's sync API keeps an event loop running in this
    thread while it is open, which would break later tests that use asyncio.
    """
    if chromium_path() is None:
        # CI installs Chromium, so there a missing browser is a failure, not a skip.
        if os.environ.get("CI"):
            pytest.fail("CI has no Chromium: " + INSTALL_HINT)
        pytest.skip(INSTALL_HINT)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
        yield context
        context.close()


@pytest.fixture(scope="module")
def base_url(site):
    with serve(site) as url:
        yield url


@pytest.fixture(scope="module")
def screenshots(site):
    folder = site.parent / "screenshots"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def visits(browser, site, base_url, screenshots):
    """Every page of the site, loaded once; chapters are also photographed."""
    pages = sorted(
        path.relative_to(site).as_posix()
        for path in site.rglob("*.html")
        if not any(part.startswith("_") for part in path.relative_to(site).parts)
    )
    names = set(chapters())
    return {
        page: visit(
            browser,
            base_url,
            page,
            screenshots / f"{page[:-5]}.png" if page[:-5] in names else None,
        )
        for page in pages
    }


def _problems(visits, attribute):
    """Map each page to its non-empty list ``attribute``, for the failure message."""
    return {
        page: getattr(v, attribute)
        for page, v in visits.items()
        if getattr(v, attribute)
    }


def test_site_has_every_chapter_and_the_search_page(visits):
    assert {f"{name}.html" for name in chapters()} | {
        "index.html",
        "search.html",
    } <= set(visits)


def test_site_pages_answer_200(visits):
    assert {page: v.status for page, v in visits.items() if v.status != 200} == {}


def test_site_pages_log_no_console_errors(visits):
    assert _problems(visits, "console_errors") == {}


def test_site_pages_have_no_failed_requests(visits):
    assert _problems(visits, "failed_requests") == {}


def test_site_pages_request_nothing_from_other_hosts(visits):
    assert _problems(visits, "external_requests") == {}


def test_site_images_load(visits):
    broken = {
        page: [img["src"] for img in v.images if img["width"] == 0]
        for page, v in visits.items()
    }
    assert {page: srcs for page, srcs in broken.items() if srcs} == {}


def test_site_math_is_typeset(visits):
    assert _problems(visits, "raw_math") == {}


def test_site_figures_have_alt_text(visits):
    missing = {
        page: [img["src"] for img in v.images if img["inArticle"] and not img["alt"]]
        for page, v in visits.items()
    }
    assert {page: srcs for page, srcs in missing.items() if srcs} == {}


@pytest.mark.parametrize("name", chapters())
def test_chapter_screenshot_saved(visits, screenshots, name):
    shot = screenshots / f"{name}.png"
    assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {name}"


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def test_search_softmax_lists_attention_chapter_with_its_text(browser, site, base_url):
    with open_page(browser, base_url + "search.html?q=softmax") as page:
        page.wait_for_selector(
            "#search-results .search-summary:has-text('Search finished')"
        )
        hit = page.locator(
            "#search-results ul.search li", has=page.locator('a[href="attention.html"]')
        )
        assert hit.count() == 1, page.inner_text("#search-results")
        snippet = hit.locator("p.context").inner_text()
    assert "softmax" in snippet.lower()
    # The snippet is cut mid-word at both ends; the words between are the chapter's.
    inner = _words(snippet).split(" ")[1:-1]
    assert len(inner) >= 8, snippet
    chapter = _words(
        unescape(re.sub(r"<[^>]+>", " ", (site / "attention.html").read_text()))
    )
    assert " ".join(inner) in chapter, snippet


def _fetch(browser, url: str) -> bytes:
    response = browser.request.get(url)
    assert response.status == 200, f"HTTP {response.status} {url}"
    return response.body()


@pytest.mark.parametrize("name", chapters())
def test_chapter_notebook_download_is_valid_nbformat(visits, browser, name):
    notebooks = [
        url for url in visits[f"{name}.html"].downloads if url.endswith(".ipynb")
    ]
    assert len(notebooks) == 1, f"{name}.html: no .ipynb in the download menu"
    nb = nbformat.reads(_fetch(browser, notebooks[0]).decode(), as_version=4)
    nbformat.validate(nb)
    assert any(cell.get("outputs") for cell in nb.cells), (
        f"{notebooks[0]} has no outputs"
    )


def test_index_links_download_all_archive(browser, base_url):
    with open_page(browser, base_url + "index.html") as page:
        links = page.locator('article a[href$=".zip"]')
        assert links.count() >= 1, (
            "index.html links no .zip archive of the book (issue #6)"
        )
        url = urljoin(page.url, links.first.get_attribute("href"))
    archive = zipfile.ZipFile(io.BytesIO(_fetch(browser, url)))
    names = [n.rsplit("/", 1)[-1] for n in archive.namelist()]
    assert {f"{name}.ipynb" for name in chapters()} <= set(names), names
    assert any(n.endswith(".whl") for n in names), f"no package wheel in {names}"
    assert any(n.startswith("requirements") for n in names), (
        f"no requirements in {names}"
    )
    assert any(n.lower().startswith("readme") for n in names), f"no README in {names}"


# The figures as the reader sees them: each drawn over its own computed
# background, over the page's, then its four corners read back.
FIGURE_CORNERS = """() => {
  const page = getComputedStyle(document.body).backgroundColor;
  const images = document.querySelectorAll(
    "article .cell_output img, article figure img");
  return [...images].map(img => {
    const [w, h] = [img.naturalWidth, img.naturalHeight];
    const canvas = document.createElement("canvas");
    Object.assign(canvas, {width: w, height: h});
    const ctx = canvas.getContext("2d");
    for (const colour of [page, getComputedStyle(img).backgroundColor]) {
      ctx.fillStyle = colour;
      ctx.fillRect(0, 0, w, h);
    }
    ctx.drawImage(img, 0, 0);
    const corners = [[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]]
      .map(([x, y]) => Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3)));
    return {src: img.getAttribute("src"), corners};
  });
}"""


def _luminance(rgb) -> float:
    r, g, b = rgb[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("name", chapters())
def test_dark_mode_keeps_figures_on_light_background(browser, base_url, name):
    with open_page(browser, base_url + f"{name}.html", color_scheme="dark") as page:
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        body = page.evaluate("getComputedStyle(document.body).backgroundColor")
        figures = page.evaluate(FIGURE_CORNERS)
    body_rgb = [int(c) for c in re.findall(r"\d+", body)[:3]]
    assert _luminance(body_rgb) < 80, f"page is not dark: {body}"
    assert figures, f"{name}.html has no figures"
    dark = [
        f["src"] for f in figures if min(_luminance(c) for c in f["corners"]) < LIGHT
    ]
    assert not dark, f"figures shown on a dark background: {dark}"


@pytest.mark.parametrize("name", chapters())
def test_phone_viewport_has_no_horizontal_scroll(browser, base_url, name):
    with open_page(browser, base_url + f"{name}.html", viewport=PHONE) as page:
        widths = page.evaluate("""() => ({
          page: document.documentElement.scrollWidth,
          viewport: document.documentElement.clientWidth,
          article: document.querySelector("article").scrollWidth,
          articleBox: document.querySelector("article").clientWidth})""")
        culprits = page.evaluate(WIDE_ELEMENTS)
    assert widths["page"] <= widths["viewport"] <= PHONE["width"], (widths, culprits)
    assert widths["article"] <= widths["articleBox"], (widths, culprits)
