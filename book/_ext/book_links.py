"""Answer a chapter's references from the Sphinx environment, as hosted-book links.

:class:`BookLinks` is the :class:`myst_markdown.Resolver` of one chapter. It
looks labels, documents, equations, glossary terms and Python objects up in
the environment Sphinx has just built, and turns each into an address on the
hosted book (``notebook_book_url``), because a downloaded notebook has no
other pages beside it. A ``literalinclude`` is read with Sphinx's own
``LiteralIncludeReader``, so the notebook shows exactly the code the page
shows.
"""

from __future__ import annotations

import base64
import mimetypes
import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader
from sphinx.util import docname_join, logging

from myst_markdown import Attachment, Link

logger = logging.getLogger(__name__)

SOURCE_SUFFIXES = (".md", ".ipynb", ".rst")
REFERENCE_KINDS = {"ref", "numref", "doc", "eq", "term", "download", "link"}


def title_markdown(node: nodes.Node) -> str:
    """Render a title node back to Markdown, keeping math and code."""
    if isinstance(node, nodes.math):
        return f"${node.astext()}$"
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, nodes.Text):
        return node.astext()
    inner = "".join(title_markdown(child) for child in node.children)
    if isinstance(node, nodes.emphasis):
        return f"*{inner}*"
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    return inner


class BookLinks:
    """Resolve the references of the chapter ``docname`` against the hosted book."""

    def __init__(self, app: Sphinx, docname: str, book_url: str) -> None:
        self.app = app
        self.env = app.env
        self.docname = docname
        self.book_url = book_url.rstrip("/") + "/"

    def page(self, docname: str, anchor: str = "") -> str:
        """Return the hosted address of a page, or of an anchor on it."""
        return f"{self.book_url}{docname}.html" + (f"#{anchor}" if anchor else "")

    def _number(self, docname: str, labelid: str) -> str:
        for numbers in self.env.toc_fignumbers.get(docname, {}).values():
            if labelid in numbers:
                return ".".join(str(n) for n in numbers[labelid])
        return ""

    def _title(self, docname: str, labelid: str) -> str:
        node = self.env.get_doctree(docname).ids.get(labelid)
        if isinstance(node, nodes.section) and node.children:
            return title_markdown(node[0])
        return ""

    def link(self, kind: str, target: str) -> Link | None:
        std = self.env.get_domain("std")
        if kind in {"ref", "numref", "exercise"}:
            key = target.lower()
            if key in std.labels:
                docname, labelid, sectname = std.labels[key]
            elif key in std.anonlabels:
                (docname, labelid), sectname = std.anonlabels[key], ""
            else:
                return None
            number = self._number(docname, labelid)
            title = self._title(docname, labelid) or " ".join(filter(None, [sectname, number]))
            return Link(self.page(docname, labelid), title, number)
        if kind == "doc":
            path, _, anchor = target.partition("#")
            if path.endswith(SOURCE_SUFFIXES):
                path = posixpath.splitext(path)[0]
            docname = path.lstrip("/") if path.startswith("/") else docname_join(self.docname, path)
            if docname not in self.env.titles:
                return None
            return Link(self.page(docname, anchor), title_markdown(self.env.titles[docname]))
        if kind == "anchor":
            if target not in self.env.get_doctree(self.docname).ids:
                return None
            return Link(self.page(self.docname, target), self._title(self.docname, target))
        if kind == "eq":
            found = self.env.get_domain("math").equations.get(target)
            return (
                Link(self.page(found[0], f"equation-{target}"), "", str(found[1]))
                if found
                else None
            )
        if kind == "term":
            found = std.objects.get(("term", target.lower()))
            return Link(self.page(*found)) if found else None
        if kind == "py":
            found = self.env.get_domain("py").objects.get(target)
            return Link(self.page(found.docname, found.node_id)) if found else None
        if kind == "download":
            rel, _ = self.env.relfn2path(target, self.docname)
            found = self.env.dlfiles.get(rel)
            return Link(f"{self.book_url}_downloads/{found[1]}") if found else None
        return None

    def literalinclude(self, argument: str, options: dict[str, str]) -> tuple[str, str]:
        """Read the code a ``literalinclude`` shows, as Sphinx's directive reads it."""
        typed = {}
        for key, value in options.items():
            convert = LiteralInclude.option_spec.get(key)
            if convert is None:
                self.warn(f"literalinclude: unknown option :{key}:", "literalinclude")
                continue
            typed[key] = convert(value or None)
        if "diff" in typed:
            typed["diff"] = self.env.relfn2path(typed["diff"], self.docname)[1]
        _, filename = self.env.relfn2path(argument, self.docname)
        code, _ = LiteralIncludeReader(filename, typed, self.app.config).read(
            location=(self.docname, None)
        )
        language = typed.get("language") or ("udiff" if "diff" in typed else "")
        if not language and Path(filename).suffix == ".py":
            language = "python"
        return code, language

    def attachment(self, path: str) -> Attachment | None:
        _, filename = self.env.relfn2path(path, self.docname)
        file = Path(filename)
        mime = mimetypes.guess_type(file.name)[0]
        if not file.is_file() or mime is None:
            return None
        return Attachment(file.name, mime, base64.b64encode(file.read_bytes()).decode("ascii"))

    def warn(self, message: str, subtype: str) -> None:
        # Unresolved references count as "ref" warnings, which `make chapter` silences.
        kind = "ref" if subtype in REFERENCE_KINDS else "notebook"
        logger.warning("notebook: %s", message, location=self.docname, type=kind, subtype=subtype)
