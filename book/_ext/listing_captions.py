"""Show package code on a page as code: captioned, and without its docstrings.

A ``literalinclude`` of package code is captioned ``code/transformer/<folder>/
<module>.py``, linked to the file in the repository (the theme's
``repository_url``), then the ``:pyobject:`` name as a ``py:obj`` cross-reference
to the API page, which a nitpicky build checks; an object without an entry (a
private helper) links to its class, else its module. The listing leaves out the
docstrings of what it shows (the API page has them), unless it has the
``:docstring:`` flag. A page's own ``:caption:`` is not allowed on package code.
"""

import ast
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader

DEFINITIONS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstring_lines(lines: list[str]) -> set[int]:
    """Return the numbers (from 1) of the lines of ``lines`` that hold a docstring
    of a module, class or function with more in its body, and a blank line after."""
    hidden = set()
    for node in ast.walk(ast.parse("".join(lines))):
        if isinstance(node, DEFINITIONS) and len(node.body) > 1:
            if ast.get_docstring(node, clean=False) is not None:
                first = node.body[0]
                end = first.end_lineno + (not lines[first.end_lineno].strip())
                hidden.update(range(first.lineno, end + 1))
    return hidden


class ListingReader(LiteralIncludeReader):
    """Sphinx's reader, less the docstrings (unless ``:docstring:``)."""

    def pyobject_filter(self, lines: list[str], location=None) -> list[str]:
        if "docstring" in self.options or "lineno-match" in self.options:
            return super().pyobject_filter(lines, location)
        hidden = docstring_lines(lines)
        marked = [None if n in hidden else line for n, line in enumerate(lines, 1)]
        kept = super().pyobject_filter(marked, location)
        return [line for line in kept if line is not None]


class CaptionedLiteralInclude(LiteralInclude):
    """``literalinclude`` that captions package code, read by ``ListingReader``."""

    option_spec = {**LiteralInclude.option_spec, "docstring": directives.flag}

    def run(self) -> list[nodes.Node]:
        env, config = self.env, self.config
        root = Path(env.app.confdir).resolve()
        package = root / config.listing_package_dir
        path = Path(env.relfn2path(self.arguments[0], env.docname)[1]).resolve()
        if package not in path.parents:
            return super().run()
        if "caption" in self.options:
            error = "package code is captioned with its file: remove :caption:"
            return [self.state.document.reporter.error(error, line=self.lineno)]
        self.options["caption"] = "listing"  # replaced below, after Sphinx wraps it
        result = super().run()
        caption = next(iter(result[0].findall(nodes.caption)), None)
        if caption is None:  # Sphinx reported an error instead of a listing
            return result
        block = next(iter(result[0].findall(nodes.literal_block)))
        text = ListingReader(path, self.options, config).read()[0]
        block[:], block.rawsource = [nodes.Text(text)], text
        relpath = path.relative_to(root).as_posix()
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        obj = self.options.get("pyobject")
        repo = config.html_theme_options.get("repository_url")
        branch = config.html_theme_options.get("repository_branch", "main")
        shown = nodes.literal(relpath, relpath)
        if repo:
            url = f"{repo.rstrip('/')}/blob/{branch}/{relpath}"
            shown = nodes.reference("", "", shown, refuri=url)
        name = obj or module
        ref = dict(refdomain="py", reftype="obj", refexplicit=True, refwarn=True)
        target = f"{module}.{obj}" if obj else module
        ref.update(reftarget=target, refdoc=env.docname, listing_caption=True)
        xref = addnodes.pending_xref("", nodes.literal(name, name), **ref)
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


def setup(app: Sphinx) -> dict:
    app.add_config_value("listing_package_dir", "code/transformer", "env")
    app.add_directive("literalinclude", CaptionedLiteralInclude, override=True)
    app.connect("missing-reference", link_nearest_parent)
    # A new env_version re-reads every page, so that each shows its listings as above.
    return {"env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
