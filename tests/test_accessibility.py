"""Access for every reader: axe-core on every page, in light and dark mode, and
the attention explorer driven with the mouse and with the keyboard alone.

axe-core comes inside the ``axe-playwright-python`` package (its
``axe.min.js``) and is injected into each page from that local file: no
network. The explorer tests open the chapter from ``file://``, as a reader who
downloaded the site would.
"""

import re
from html import unescape

import pytest

from browser_support import serve
from conftest import HTML
from test_browser import browser  # noqa: F401 (the shared Chromium fixture)

pytestmark = pytest.mark.browser

# axe's impact levels that must not occur
BLOCKING = {"serious", "critical"}

# Wait for the page to be still before axe measures colours: math typeset,
# fonts loaded, and no CSS transition (the theme fading in its colours) running.
SETTLED = """async () => {
  if (window.MathJax?.startup?.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  const moving = document.getAnimations().filter(a => a instanceof CSSTransition);
  await Promise.all(moving.map(a => a.finished.catch(() => null)));
}"""


def _site_pages(site):
    return sorted(
        path.relative_to(site).as_posix()
        for path in site.rglob("*.html")
        if not any(part.startswith("_") for part in path.relative_to(site).parts)
    )


@pytest.fixture(scope="module")
def axe_results(browser, site):  # noqa: F811
    """Every page in both colour modes, checked once: {(page, mode): [violations]}."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = {}
    with serve(site) as base_url:
        for mode in ("light", "dark"):
            page = browser.new_page()
            page.emulate_media(color_scheme=mode, reduced_motion="reduce")
            for path in _site_pages(site):
                page.goto(base_url + path, wait_until="load")
                page.evaluate(SETTLED)
                assert page.evaluate("document.documentElement.dataset.theme") == mode
                violations = axe.run(page).response["violations"]
                found[(path, mode)] = [
                    f"{v['id']} ({v['impact']}): {v['help']}; e.g. "
                    + "; ".join(
                        n["target"][0]
                        if isinstance(n["target"][0], str)
                        else str(n["target"])
                        for n in v["nodes"][:3]
                    )  # fmt: skip
                    for v in violations
                    if v["impact"] in BLOCKING
                ]
            page.close()
    return found


def test_axe_checked_every_page_in_both_modes(axe_results):
    pages = _site_pages(HTML)
    assert {"index.html", "multihead.html", "decoder_only.html", "search.html"} <= set(
        pages
    )
    assert set(axe_results) == {(p, m) for p in pages for m in ("light", "dark")}


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_violation(axe_results, mode):
    problems = {p: v for (p, m), v in axe_results.items() if m == mode and v}
    assert problems == {}


# -- The attention explorer, from file:// ----------------------------------------

PICTURE = """root => [...root.querySelectorAll('.ae-picture tbody td')]
  .map(td => td.style.backgroundColor || td.className).join('|')"""


@pytest.fixture
def chapter(browser, site):  # noqa: F811
    """Open a chapter from file://; yield (page, record of errors and requests)."""
    record = {"errors": [], "remote": []}
    page = browser.new_page()
    page.on("console", lambda m: m.type == "error" and record["errors"].append(m.text))
    page.on("pageerror", lambda error: record["errors"].append(str(error)))
    local = ("file://", "data:", "blob:")
    page.on(
        "request", lambda r: r.url.startswith(local) or record["remote"].append(r.url)
    )

    def open_(name):
        page.goto((site / f"{name}.html").as_uri(), wait_until="load")
        return page

    yield open_, record
    page.close()


def test_explorer_picture_changes_with_head_then_stage(chapter):
    open_, record = chapter
    page = open_("multihead")
    root = page.locator(".attention-explorer").first
    root.scroll_into_view_if_needed()
    first = root.evaluate(PICTURE)
    assert first.count("|") + 1 == 4 * 8 * 8  # all four heads, 8 x 8 each
    root.get_by_label("Head", exact=True).select_option("1")
    after_head = root.evaluate(PICTURE)
    assert after_head != first and after_head.count("|") + 1 == 8 * 8
    root.get_by_label("Stage", exact=True).select_option("masked")
    after_stage = root.evaluate(PICTURE)
    assert after_stage != after_head
    assert "ae-blocked" in after_stage  # the causal mask's -inf cells
    assert record == {"errors": [], "remote": []}


def test_explorer_readout_shows_the_numbers_of_the_focused_query(chapter):
    open_, record = chapter
    page = open_("multihead")
    root = page.locator(".attention-explorer").first
    root.get_by_label("Head", exact=True).select_option("0")
    row = root.locator("th[scope=row]").nth(3)  # "sat"
    row.hover()
    readout = root.locator(".ae-readout").inner_text()
    # head 0 ("previous") at "sat" reads "cat": the exported weight is near 1
    assert "Query 3 (sat)" in readout
    weights = dict(
        item.rsplit(" ", 1) for item in readout.split("head 0: ")[1].split(", ")
    )
    assert float(weights["cat"]) > 0.99
    assert root.locator("tr.ae-active th").inner_text() == "sat"
    assert record == {"errors": [], "remote": []}


@pytest.mark.parametrize("name", ["multihead", "decoder_only"])
def test_explorer_keyboard_reaches_and_changes_every_control(chapter, name):
    open_, record = chapter
    page = open_(name)
    root = page.locator(".attention-explorer").first
    # Start on the link of the explorer's heading, then use the keyboard only.
    root.evaluate("""root => {
      const start = document.createElement('a');
      start.href = '#'; start.id = 'keyboard-start'; start.textContent = 'start';
      root.before(start); start.focus(); }""")
    controls = root.locator("select")
    # every choice the reader has is a select: four on the decoder-only page,
    # head and stage on the multi-head page (one example, one layer: shown as text)
    expected = {
        "multihead": ["Head", "Stage"],
        "decoder_only": ["Example", "Layer", "Head", "Stage"],
    }[name]
    labels = []
    for index in range(controls.count()):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.id")
        assert focused == controls.nth(index).get_attribute("id")
        label = root.locator(f"label[for='{focused}']").inner_text()
        labels.append(label)
        before = (controls.nth(index).input_value(), root.evaluate(PICTURE))
        last = controls.nth(index).evaluate(
            "s => s.selectedIndex === s.options.length - 1"
        )
        page.keyboard.press("ArrowUp" if last else "ArrowDown")
        after = (controls.nth(index).input_value(), root.evaluate(PICTURE))
        assert after[0] != before[0], (
            f"{label}: the arrow key did not change the choice"
        )
        assert after[1] != before[1], f"{label}: the picture did not change"
    assert labels == expected
    # Then into the picture: a query row, and the arrow keys move along the rows.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('scope')") == "row"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.closest('tr').dataset.query") == "1"
    assert "Query 1" in root.locator(".ae-readout").inner_text()
    assert record == {"errors": [], "remote": []}


# -- Figures ------------------------------------------------------------------------

FIGURE = re.compile(r'<img\b[^>]*\bsrc="_images/[^"]*"[^>]*>')
ALT = re.compile(r'\balt="([^"]*)"')


def test_every_figure_has_alt_text_that_says_what_it_shows(site):
    poor = {}
    for path in sorted(site.glob("*.html")):
        for tag in FIGURE.findall(path.read_text()):
            alt = unescape(ALT.search(tag).group(1)) if ALT.search(tag) else ""
            # a sentence or more, never the file's name or a bare "image"
            if len(alt.split()) < 8 or re.search(
                r"\.(png|svg|jpe?g)\b|_images|^image", alt
            ):
                poor.setdefault(path.name, []).append(alt or tag)
    assert poor == {}
