"""Let the ``singlehtml`` builder render the book for ``make pdf``.

Extensions register how the HTML builder writes their nodes under the
builder's name ``html``. Sphinx falls back from ``singlehtml`` to those
handlers only when no extension registered any for ``singlehtml`` itself;
sphinx-exercise does, so myst-nb's nodes (a hidden cell's toggle, say) would
be unknown to ``singlehtml``. This extension gives ``singlehtml`` every
``html`` handler it lacks.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _share_html_handlers(app: Sphinx) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, pair in handlers.get("html", {}).items():
        single.setdefault(node, pair)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _share_html_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
