"""What the browser tests share: a local server for the built site, the
Chromium they drive, and one visit of a page with everything it did recorded.

Playwright drives the distribution's Chromium through ``executable_path``;
``playwright install`` (a browser download) is never used.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = "chromium"
INSTALL_HINT = (
    "Chromium not found on PATH, so the browser tests cannot run. Install your "
    "distribution's package, e.g. `sudo apt-get install chromium` on Debian "
    "(.ci/run does this); Playwright's own browser download is not used."
)
# A fresh profile that talks to no one but the local server.
CHROMIUM_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
]
# URLs that never reach a server.
LOCAL_SCHEMES = ("data:", "blob:", "about:")

WAIT_FOR_MATH = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
}"""

# Text the reader sees (code blocks excepted, where TeX is meant literally)
# that still holds TeX delimiters, and MathJax's own error boxes.
RAW_MATH = r"""() => {
  const skip = "pre, code, script, style, textarea, mjx-container";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let node; (node = walker.nextNode());) {
    if (node.parentElement.closest(skip)) continue;
    const text = node.textContent;
    const at = text.search(/\\\(|\\\[|\$\$/);
    if (at >= 0) raw.push(text.slice(Math.max(0, at - 30), at + 40).trim());
  }
  const errors = [...document.querySelectorAll("mjx-merror")].map(e => e.textContent);
  return raw.concat(errors.map(e => "MathJax error: " + e));
}"""

IMAGES = """() => [...document.images].map(img => ({
  src: img.getAttribute("src"),
  alt: (img.getAttribute("alt") || "").trim(),
  width: img.naturalWidth,
  inArticle: !!img.closest("article"),
}))"""

# The absolute URLs in the page's download menu.
DOWNLOADS = """() => [...document.querySelectorAll(
  ".dropdown-download-buttons a[href]")].map(a => a.href)"""

# Elements that stick out to the right of the viewport without an ancestor
# that scrolls or clips them: what makes the page scroll sideways.
WIDE_ELEMENTS = """() => [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .filter(e => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== "visible") return false;
    return true;
  })
  .slice(0, 5)
  .map(e => `<${e.tagName.toLowerCase()} class="${e.className}"> `
    + e.textContent.trim().slice(0, 60))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 at a free port; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chromium_path() -> str | None:
    """Return the system Chromium, or None when it is not installed."""
    return shutil.which(CHROMIUM)


def launch(playwright, profile: Path):
    """Start headless Chromium on a fresh ``profile``; return its browser context."""
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS
    )
    context.set_default_timeout(30_000)
    return context


@dataclass
class Visit:
    """What one page did while it loaded, as seen from the browser."""

    path: str
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)
    raw_math: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)


@contextmanager
def open_page(
    context, url: str, *, viewport: dict | None = None, color_scheme: str | None = None
):
    """Open ``url`` in a new tab, wait until its math is typeset, yield the tab, close
    it."""
    page = context.new_page()
    try:
        if viewport:
            page.set_viewport_size(viewport)
        if color_scheme:
            page.emulate_media(color_scheme=color_scheme)
        page.goto(url, wait_until="load")
        page.evaluate(WAIT_FOR_MATH)
        yield page
    finally:
        page.close()


def visit(context, base_url: str, path: str, screenshot: Path | None = None) -> Visit:
    """Load ``path`` from the site at ``base_url`` and record everything it did.

    Waits for the network to go quiet, so every request the page makes is
    seen, and for MathJax to finish. With ``screenshot``, saves a full-page
    screenshot there.
    """
    record = Visit(path)
    page = context.new_page()

    def on_console(message):
        if message.type == "error":
            record.console_errors.append(
                f"{message.text} ({message.location.get('url')})"
            )

    def on_request(request):
        url = request.url
        if not url.startswith(base_url) and not url.startswith(LOCAL_SCHEMES):
            record.external_requests.append(url)

    def on_response(response):
        if response.status >= 400:
            record.failed_requests.append(f"HTTP {response.status} {response.url}")

    page.on("console", on_console)
    page.on(
        "pageerror", lambda error: record.console_errors.append(f"uncaught: {error}")
    )
    page.on("request", on_request)
    page.on(
        "requestfailed", lambda r: record.failed_requests.append(f"{r.failure} {r.url}")
    )
    page.on("response", on_response)
    try:
        response = page.goto(base_url + path, wait_until="networkidle")
        record.status = response.status if response else None
        page.evaluate(WAIT_FOR_MATH)
        record.images = page.evaluate(IMAGES)
        record.raw_math = page.evaluate(RAW_MATH)
        record.downloads = page.evaluate(DOWNLOADS)
        if screenshot:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
    finally:
        page.close()
    return record
