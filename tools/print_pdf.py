"""Print the single-page build of the book to a PDF with headless Chromium (`make pdf`).

Usage: ``python tools/print_pdf.py SINGLEHTML_FOLDER OUTPUT.pdf``

The page is opened from ``file://`` with print media emulated, so
``book/_static/print.css`` applies; the theme adds the table of contents
(its print-only ``#jb-print-toc``). Before printing, this script waits for
MathJax to typeset every formula and opens every folded block (solutions,
hidden inputs), and points links to files beside the page at the hosted
book, so that no link names this machine. Chromium numbers
the pages in the footer. Next to the PDF it writes ``print-report.json``:
the chapters, and any code block wider than the page or formula left raw
(both must be empty lists; the script fails otherwise).

Chromium is the system's (``chromium`` on PATH), driven by Playwright, the
same browser the tests use; no TeX and no browser download are needed.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

# Debian's Chromium first, as in the tests; Google Chrome (on CI runners) prints the
# same.
BROWSERS = ("chromium", "google-chrome", "google-chrome-stable")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

PREPARE = r"""async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    if (MathJax.typesetPromise) await MathJax.typesetPromise();
  }
  for (const d of document.querySelectorAll("details")) d.open = true;
  // A link to a file beside the page (the zip, this PDF) would print as a file:// path
  // on this machine: it points at the hosted book (the canonical address) instead.
  const here = location.href.split("#")[0];
  const site = document.querySelector('link[rel="canonical"]')?.href;
  for (const a of document.querySelectorAll("a[href]")) {
    if (a.protocol !== "file:" || a.href.split("#")[0] === here) continue;
    if (site) a.href = new URL(a.getAttribute("href"), site).href;
    else a.removeAttribute("href");
  }
  for (const e of document.querySelectorAll(".toggle-hidden"))
    e.classList.remove("toggle-hidden");
  // The chapters, for the report (the theme prints the table of contents).
  const chapters = [...document.querySelectorAll('span[id^="document-"]')].map(span => {
    // singlehtml nests each chapter under the index's headings: its title is
    // the first heading of the section that follows the span, whatever its level.
    const heading = span.nextElementSibling.querySelector("h1, h2, h3, h4");
    return heading.textContent.replace(/[#¶]\s*$/, "").trim();
  });
  await Promise.all([...document.images].map(img => img.decode().catch(() => null)));
  return chapters;
}"""

# Code blocks that are wider than the printed page, and TeX left untypeset.
CHECK = r"""() => {
  const wide = [...document.querySelectorAll("article pre")]
    .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.textContent.split("\n")
      .sort((a, b) => b.length - a.length)[0].slice(0, 80));
  const raw = [];
  const article = document.querySelector("article");
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    if (node.parentElement.closest("pre, code, script, style, mjx-container")) continue;
    const at = node.textContent.search(/\$\$|\\frac|\\\(|\\\[/);
    if (at >= 0) raw.push(node.textContent.slice(Math.max(0, at - 30), at + 40).trim());
  }
  return {wide, raw};
}"""

FOOTER = (
    '<div style="font-size: 8px; width: 100%; text-align: center; color: #444;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)


def print_pdf(folder: Path, output: Path) -> dict:
    """Print ``folder/index.html`` to ``output``; return the report."""
    chromium = next(filter(None, map(shutil.which, BROWSERS)), None)
    if chromium is None:
        raise SystemExit("chromium not found on PATH: apt-get install chromium")
    output.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=ARGS
        )
        context.set_default_timeout(120_000)
        page = context.new_page()
        page.emulate_media(media="print", color_scheme="light")
        page.goto((folder / "index.html").resolve().as_uri(), wait_until="load")
        chapters = page.evaluate(PREPARE)
        report = {"chapters": chapters, **page.evaluate(CHECK)}
        page.pdf(
            path=str(output),
            format="A4",
            print_background=True,
            display_header_footer=True,
            header_template="<div></div>",
            footer_template=FOOTER,
            margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"},
            outline=True,
            tagged=True,
        )
        context.close()
    (output.parent / "print-report.json").write_text(
        json.dumps(report, indent=1) + "\n"
    )
    return report


def main() -> None:
    folder, output = Path(sys.argv[1]), Path(sys.argv[2])
    report = print_pdf(folder, output)
    size = output.stat().st_size // 1024
    print(f"{output}: {len(report['chapters'])} chapters, {size} KiB")
    if report["wide"] or report["raw"]:
        raise SystemExit(
            f"code wider than the page: {report['wide']}; raw TeX: {report['raw']}"
        )


if __name__ == "__main__":
    main()
