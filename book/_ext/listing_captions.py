"""Caption every ``literalinclude`` of package code with its file and object.

The caption is ``code/transformer/<module>.py``, linked to the file in the
repository (the theme's ``repository_url``), then the ``:pyobject:`` name as a
``py:obj`` cross-reference to the API page, which a nitpicky build checks. An
object without an entry (a private helper) links to its class, else its module.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralInclude


class CaptionedLiteralInclude(LiteralInclude):
    """``literalinclude`` that captions package code with its path and object."""

    def run(self) -> list[nodes.Node]:
        env, config = self.env, self.config
        package = (Path(env.app.confdir) / config.listing_package_dir).resolve()
        path = Path(env.relfn2path(self.arguments[0], env.docname)[1]).resolve()
        if "caption" in self.options or package not in path.parents:
            return super().run()
        self.options["caption"] = "listing"  # replaced below, after Sphinx wraps it
        result = super().run()
        caption = next(iter(result[0].findall(nodes.caption)), None)
        if caption is None:  # Sphinx reported an error instead of a listing
            return result
        relpath = path.relative_to(Path(env.app.confdir).resolve()).as_posix()
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        obj = self.options.get("pyobject")
        repo = config.html_theme_options.get("repository_url")
        branch = config.html_theme_options.get("repository_branch", "main")
        shown = nodes.literal(relpath, relpath)
        if repo:
            shown = nodes.reference(
                "", "", shown, refuri=f"{repo.rstrip('/')}/blob/{branch}/{relpath}"
            )
        xref = addnodes.pending_xref(
            "",
            nodes.literal(obj or module, obj or module),
            refdomain="py",
            reftype="obj",
            reftarget=f"{module}.{obj}" if obj else module,
            refexplicit=True,
            refwarn=True,
            refdoc=env.docname,
            listing_caption=True,
        )
        caption.children = []
        caption += [shown, nodes.Text(" · "), xref]
        return result


def link_nearest_parent(app: Sphinx, env, node, contnode):
    """Resolve a caption's missing object to its class, or else its module."""
    if not node.get("listing_caption"):
        return None
    domain = env.get_domain("py")
    parts = node["reftarget"].split(".")
    for n in range(len(parts) - 1, 1, -1):  # stop at "transformer.<module>"
        target = ".".join(parts[:n])
        found = domain.resolve_xref(
            env, node["refdoc"], app.builder, "obj", target, node, contnode
        )
        if found is not None:
            return found
    return None


def setup(app: Sphinx) -> dict:
    app.add_config_value("listing_package_dir", "code/transformer", "env")
    app.add_directive("literalinclude", CaptionedLiteralInclude, override=True)
    app.connect("missing-reference", link_nearest_parent)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
