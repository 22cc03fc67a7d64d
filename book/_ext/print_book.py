"""Give the ``singlehtml`` builder (``make pdf``) every ``html`` node handler it lacks.

Sphinx lends ``singlehtml`` the handlers registered for ``html`` only when no
extension registered any for ``singlehtml``; sphinx-exercise does, so myst-nb's
nodes (a hidden cell's toggle, say) would otherwise be unknown to it.
"""

from sphinx.application import Sphinx


def _share_html_handlers(app: Sphinx) -> None:
    if app.builder.name == "singlehtml":
        handlers = app.registry.translation_handlers
        html, single = handlers.get("html", {}), handlers.get("singlehtml", {})
        handlers["singlehtml"] = html | single  # its own handlers win


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _share_html_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
