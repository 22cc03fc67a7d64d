"""Give the ``singlehtml`` builder (``make pdf``) every ``html`` node handler it lacks.

Sphinx lends ``singlehtml`` the handlers registered for ``html`` only when no
extension registered any for ``singlehtml``; sphinx-exercise does, so myst-nb's
nodes (a hidden cell's toggle, say) would otherwise be unknown to it.
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
