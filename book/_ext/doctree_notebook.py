"""Write a chapter as Jupyter notebook cells from the page Sphinx has parsed.

The resolved doctree of a chapter already holds what the page shows:
paragraphs, math, admonitions, exercises, the code a ``literalinclude``
reads, references resolved to pages. :func:`doctree_cells` walks it once:

* each code cell (myst-nb's ``cell_code`` container) is the executed
  notebook's cell of the same index, so source, tags and outputs are the
  page's; everything between two code cells, or up to a new section, is one
  Markdown cell;
* math stays TeX between ``$`` or ``$$``; admonitions and exercises become
  block quotes under a bold title; a solution's code cells stay between a bold
  "Solution to Exercise N" and an "End of the solution" line;
* references become links to the hosted book, images cell attachments.

A node without a rendering here is reported through ``warn`` (the strict
build fails) and written as its plain text.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

DROPPED = (nodes.target, nodes.comment, nodes.substitution_definition, nodes.system_message,
           addnodes.index, addnodes.toctree, nodes.raw)
TRANSPARENT = (nodes.inline, nodes.abbreviation, nodes.generated, nodes.problematic,
               addnodes.pending_xref, addnodes.literal_emphasis, addnodes.literal_strong)
ESCAPED = re.compile(r"([\\`*_\[\]<$])")  # what Markdown would read as markup


def _titled(node: nodes.Node) -> bool:
    return bool(node.children) and isinstance(node[0], nodes.title)


def is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def _fence(code: str, language: str = "") -> str:
    ticks = "`" * max(3, 1 + max(map(len, re.findall("`+", code)), default=0))
    return f"{ticks}{language}\n{code.rstrip()}\n{ticks}"


def _code_span(text: str) -> str:
    ticks = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{' '.join(text.split())}{pad}{ticks}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def _indent(text: str, prefix: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([prefix + first, *(" " * len(prefix) + line if line else "" for line in rest)])


class _Writer:
    def __init__(self, page_url: str, srcdir: Path, fignumbers: dict, warn: Callable) -> None:
        self.page_url, self.srcdir, self.fignumbers, self.warn = page_url, srcdir, fignumbers, warn
        self.cells: list[tuple[str, object]] = []  # ("markdown", text) or ("code", index)
        self.pending: list[str] = []
        self.attachments: dict[str, dict[str, str]] = {}

    # -- cells ----------------------------------------------------------------
    def flush(self) -> None:
        text = "\n\n".join(filter(None, self.pending)).strip("\n")
        if text:
            self.cells.append(("markdown", (text, self.attachments)))
        self.pending, self.attachments = [], {}

    def walk(self, node: nodes.Node) -> None:
        if is_code_cell(node):
            self.flush()
            self.cells.append(("code", node["cell_index"]))
            return
        holds_cells = any(is_code_cell(n) for n in node.findall(nodes.container))
        if not holds_cells and not isinstance(node, (nodes.section, nodes.document)):
            self.pending.append(self.block(node))
            return
        children, end = node.children, ""
        if _titled(node) and isinstance(node, nodes.section):
            self.flush()
            self.pending.append(self.heading(node))
            children = children[1:]
        elif _titled(node) and isinstance(node, nodes.Admonition):
            self.pending.append(f"**{self.title(node)}**")
            if isinstance(node, solution_node):
                self.pending[-1] += " (try the exercise first)"
                end = f"*End of the solution to {node[0].astext().split(' to ', 1)[-1]}.*"
            children = children[1:]
        for child in children:
            self.walk(child)
        self.pending.append(end)

    # -- blocks ---------------------------------------------------------------
    def blocks(self, children) -> str:
        return "\n\n".join(filter(None, (self.block(child) for child in children)))

    def block(self, node: nodes.Node) -> str:  # noqa: C901 (one branch per node type)
        if isinstance(node, DROPPED) and not (
            isinstance(node, nodes.raw) and "html" in node.get("format", "")
        ):
            return ""
        if isinstance(node, (nodes.paragraph, nodes.rubric)):
            text = self.inline(node)
            return f"**{text}**" if isinstance(node, nodes.rubric) else text
        if isinstance(node, nodes.section) and _titled(node):
            return "\n\n".join([self.heading(node), self.blocks(node[1:])])
        if isinstance(node, nodes.literal_block):
            return _fence(node.astext(), node.get("language", "").replace("default", ""))
        if isinstance(node, nodes.math_block):
            tag = f"\\tag{{{node['number']}}}\n" if node.get("number") else ""
            return f"$$\n{node.astext().strip()}\n{tag}$$"
        if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
            start = node.get("start", 1)
            marks = [
                "- " if isinstance(node, nodes.bullet_list) else f"{start + i}. "
                for i in range(len(node))
            ]
            return "\n".join(_indent(self.blocks(item), mark) for mark, item in zip(marks, node))
        if isinstance(node, nodes.definition_list):
            items = []
            for item in node:
                term = self.inline(item.next_node(nodes.term))
                definition = self.blocks(item.next_node(nodes.definition))
                items.append(_indent(f"**{term}**: {definition}", "- "))
            return "\n".join(items)
        if isinstance(node, nodes.block_quote):
            return _quote(self.blocks(node))
        if isinstance(node, nodes.Admonition):
            body = self.blocks(node[1:] if _titled(node) else node)
            return _quote(f"**{self.title(node)}**\n\n{body}".strip())
        if isinstance(node, nodes.table):
            return self.table(node)
        if isinstance(node, nodes.image):
            return self.image(node)
        if isinstance(node, nodes.caption):
            return f"**{self.inline(node)}**"
        if isinstance(node, nodes.transition):
            return "---"
        if isinstance(node, nodes.raw):
            return node.astext()
        if isinstance(node, (nodes.container, nodes.compound, nodes.figure, nodes.legend,
                             nodes.section)):
            return self.blocks(node)
        self.warn(f"no notebook rendering for <{node.tagname}>")
        return node.astext()

    def heading(self, section: nodes.section) -> str:
        level, node = 0, section
        while node is not None:
            level += isinstance(node, nodes.section) and _titled(node)
            node = node.parent
        return f"{'#' * min(level, 6)} {self.inline(section[0])}"

    def title(self, node: nodes.Element) -> str:
        """Return an admonition's title as the page shows it (numbered for exercises)."""
        text = self.inline(node[0]) if _titled(node) else ""
        if isinstance(node, exercise_enumerable_node):
            number = ".".join(map(str, self.fignumbers.get("exercise", {}).get(node["ids"][0], ())))
            text = f"Exercise {number}{text}"
        elif isinstance(node, exercise_node) and not text:
            text = "Exercise"
        return text or node.tagname.replace("_", " ").capitalize()

    def table(self, table: nodes.table) -> str:
        rows = [
            [self.blocks(entry).replace("|", "\\|").replace("\n", " ") for entry in row]
            for row in table.findall(nodes.row)
        ]
        width = max(map(len, rows), default=0)
        lines = [f"| {' | '.join(row + [''] * (width - len(row)))} |" for row in rows]
        lines[1:1] = ["|" + " --- |" * width]
        title = table.next_node(nodes.title)
        return (f"**{self.inline(title)}**\n\n" if title else "") + "\n".join(lines)

    def image(self, node: nodes.image) -> str:
        uri, alt = node["uri"], node.get("alt", "")
        path = self.srcdir / uri
        if "://" in uri:
            return f"![{alt}]({uri})"
        mime = mimetypes.guess_type(path.name)[0]
        if not path.is_file() or mime is None:
            self.warn(f"image not found: {uri}")
            return f"*[image: {alt or uri}]*"
        self.attachments[path.name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
        return f"![{alt}](attachment:{path.name})"

    # -- inline ---------------------------------------------------------------
    def inline(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return ESCAPED.sub(r"\\\1", node.astext())
        if isinstance(node, nodes.literal):
            return _code_span(node.astext())
        if isinstance(node, nodes.math):
            return f"${node.astext()}$"
        if isinstance(node, nodes.image):
            return self.image(node)
        if isinstance(node, nodes.target) and not node.children:
            return ""
        inner = "".join(self.inline(child) for child in node.children)
        text = inner.strip()
        left, right = inner[: inner.index(text)] if text else inner, inner[len(inner.rstrip()) :]
        if isinstance(node, nodes.emphasis):
            return f"{left}*{text}*{right}"
        if isinstance(node, nodes.strong):
            return f"{left}**{text}**{right}"
        if isinstance(node, (nodes.subscript, nodes.superscript)):
            tag = "sub" if isinstance(node, nodes.subscript) else "sup"
            return f"<{tag}>{inner}</{tag}>"
        if isinstance(node, nodes.reference):
            target = node.get("refuri") or "#" + node.get("refid", "")
            return f"{left}[{text}]({urljoin(self.page_url, target)}){right}"
        if isinstance(node, addnodes.download_reference):
            url = urljoin(self.page_url, "_downloads/" + node["filename"])
            return f"{left}[{text}]({url}){right}"
        if not isinstance(node, (*TRANSPARENT, nodes.TextElement, nodes.target)):
            self.warn(f"no notebook rendering for <{node.tagname}>")
        return inner


def inline_markdown(node: nodes.Node) -> str:
    """Return the Markdown of an inline node, such as a page title (links unresolved)."""
    return _Writer("", Path(), {}, lambda message: None).inline(node)


def doctree_cells(
    doctree: nodes.document,
    executed: nbformat.NotebookNode,
    *,
    page_url: str,
    srcdir: Path,
    fignumbers: dict,
    warn: Callable[[str], None],
) -> list[nbformat.NotebookNode]:
    """Return a chapter's notebook cells: Markdown from its doctree, code cells as executed.

    Args:
        doctree: The chapter's resolved doctree (``env.get_and_resolve_doctree``).
        executed: The notebook myst-nb executed for the page, with its outputs.
        page_url: Address of the chapter on the hosted book; links resolve from it.
        srcdir: Sphinx's source folder (images are relative to it).
        fignumbers: The chapter's figure numbers (``env.toc_fignumbers[docname]``).
        warn: Called with a message for each node that has no rendering.

    Raises:
        ValueError: If a code cell of the page is not a code cell of ``executed``.
    """
    writer = _Writer(page_url, srcdir, fignumbers, warn)
    writer.walk(doctree)
    writer.flush()
    code = [i for i, cell in enumerate(executed.cells) if cell.cell_type == "code"]
    cells, done = [], -1
    for kind, value in writer.cells:
        if kind == "markdown":
            text, attachments = value
            cell = nbformat.v4.new_markdown_cell(text)
            if attachments:
                cell.attachments = attachments
            cells.append(cell)
            continue
        if value not in code or value <= done:
            raise ValueError(f"code cell {value} of the page is not in the executed notebook")
        # A cell the page removes (tag remove-cell) stays in the notebook, in its place.
        cells += [executed.cells[i] for i in code if done < i <= value]
        done = value
    return cells + [executed.cells[i] for i in code if i > done]
