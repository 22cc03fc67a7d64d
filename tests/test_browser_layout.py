"""Nothing clipped: at a laptop's 1280×800 window, no code block on any chapter
page needs a horizontal scroll bar (book/_static/book.css sets the widths).

The browser and the local server are test_browser.py's fixtures; folded
solutions and hidden cell inputs are opened first, so they are measured too.
"""

import pytest

from browser_support import open_page
from conftest import chapters
from test_browser import base_url, browser  # noqa: F401 (fixtures, shared)

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}

# Open every fold (hidden inputs, dropdown solutions), then list the code
# blocks, inputs and outputs alike, whose content is wider than their box.
SCROLLING_CODE = """() => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll(".toggle-hidden")
    .forEach(e => e.classList.remove("toggle-hidden"));
  const blocks = "article div.highlight pre, article .cell_output pre";
  return [...document.querySelectorAll(blocks)]
    .filter(pre => pre.clientWidth > 0 && pre.scrollWidth > pre.clientWidth)
    .map(pre => {
      const line = pre.textContent.split("\\n")
        .reduce((a, b) => (b.length > a.length ? b : a), "");
      return `${pre.scrollWidth} > ${pre.clientWidth}px: ${line.trim().slice(0, 100)}`;
    });
}"""

# Long cell lines may wrap (book.css), but a package listing must hold a full
# 88-character line (ruff's line length) unwrapped: try one in the first listing
# shown (one folded in a closed dropdown has no width to measure).
FITS_88 = """() => {
  const pre = Array.from(document.querySelectorAll(
    "article div.literal-block-wrapper div.highlight pre"))
    .find((element) => element.offsetParent !== null);
  if (!pre) return null;
  const probe = document.createElement("span");
  probe.style.whiteSpace = "pre";
  probe.textContent = "x".repeat(88);
  pre.appendChild(probe);
  const width = probe.getBoundingClientRect().width;
  probe.remove();
  const style = getComputedStyle(pre);
  const room =
    pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return width <= room;
}"""

MEASURED = """() => document.querySelectorAll(
  "article div.highlight pre, article .cell_output pre").length"""


@pytest.mark.parametrize("name", chapters())
def test_code_blocks_do_not_scroll_sideways_at_1280x800(browser, base_url, name):  # noqa: F811
    with open_page(browser, base_url + f"{name}.html", viewport=LAPTOP) as page:
        scrolling = page.evaluate(SCROLLING_CODE)
        assert page.evaluate(MEASURED) > 0, f"{name}: no code block found"
        fits = page.evaluate(FITS_88)
    assert fits is not False, (
        f"{name}: an 88-character line does not fit a package listing"
    )
    assert not scrolling, f"{name}: code blocks that scroll sideways:\n" + "\n".join(
        scrolling
    )
