"""Write a chapter as notebook cells, from the doctree Sphinx resolved for its page.

Code cells are the executed notebook's own, so source, tags and outputs are the
page's; the Markdown between them is rendered from the doctree, so no MyST is
parsed twice. A node without a rendering here is reported through ``warn``
(failing the strict build) and written as plain text.
"""

import re
from collections.abc import Callable
from urllib.parse import urljoin

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx_exercise.nodes import exercise_enumerable_node, solution_node

# Invisible: targets, comments, substitution definitions, index entries.
DROPPED = (nodes.Invisible, nodes.system_message, addnodes.toctree)
TRANSPARENT = (nodes.inline, nodes.abbreviation, nodes.generated, addnodes.pending_xref)
BLOCKS = (
    nodes.container,
    nodes.compound,
    nodes.section,
    nodes.legend,
    nodes.entry,
    nodes.list_item,
)
ESCAPED = re.compile(r"([\\`*_\[\]<$])")  # what Markdown would read as markup


def _titled(node: nodes.Node) -> bool:
    return bool(node.children) and isinstance(node[0], nodes.title)


def _is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def _ticks(text: str, least: int) -> str:
    return "`" * max(least, 1 + max(map(len, re.findall("`+", text)), default=0))


def _prefix(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join(
        [first + lines[0], *((rest + line).rstrip() for line in lines[1:])]
    )


class _Writer:
    def __init__(self, page_url: str, fignumbers: dict, warn: Callable) -> None:
        self.page_url, self.fignumbers, self.warn = page_url, fignumbers, warn
        # Markdown, or the index of an executed code cell
        self.cells: list[str | int] = []
        self.pending: list[str] = []

    def flush(self) -> None:
        text = "\n\n".join(filter(None, self.pending)).strip("\n")
        self.cells += [text] if text else []
        self.pending = []

    def walk(self, node: nodes.Node, level: int = 0) -> None:
        """Add a node: as Markdown, unless it is or holds code cells (or is a section).
        ``level`` counts the titled sections around it."""
        if _is_code_cell(node):
            self.flush()
            self.cells.append(node["cell_index"])
            return
        if not isinstance(node, (nodes.section, nodes.document)) and not any(
            map(_is_code_cell, node.findall(nodes.container))
        ):
            self.pending.append(self.block(node))
            return
        children, end = node.children, ""
        if isinstance(node, nodes.section) and _titled(node):
            self.flush()
            level += 1
            self.pending.append(f"{'#' * min(level, 6)} {self.text(node[0])}")
            children = children[1:]
        elif isinstance(node, nodes.Admonition) and _titled(node):
            self.pending.append(f"**{self.title(node)}**")
            if isinstance(node, solution_node):
                self.pending[-1] += " (try the exercise first)"
                exercise = node[0].astext().split(" to ", 1)[-1]
                end = f"*End of the solution to {exercise}.*"
            children = children[1:]
        for child in children:
            self.walk(child, level)
        self.pending.append(end)

    def blocks(self, children) -> str:
        return "\n\n".join(filter(None, map(self.block, children)))

    def block(self, node: nodes.Node) -> str:
        if isinstance(node, DROPPED):
            return ""
        if isinstance(node, (nodes.paragraph, nodes.caption)):
            return self.text(node)
        if isinstance(node, (nodes.title, nodes.rubric)):
            return f"**{self.text(node)}**"
        if isinstance(node, nodes.literal_block):
            ticks, code = _ticks(node.astext(), 3), node.astext().rstrip()
            language = node.get("language", "").replace("default", "")
            return f"{ticks}{language}\n{code}\n{ticks}"
        if isinstance(node, nodes.math_block):
            tag = f"\\tag{{{node['number']}}}\n" if node.get("number") else ""
            return f"$$\n{node.astext().strip()}\n{tag}$$"
        if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
            start, bullet = node.get("start", 1), isinstance(node, nodes.bullet_list)
            marks = ["- " if bullet else f"{start + i}. " for i in range(len(node))]
            return "\n".join(
                _prefix(self.block(item), mark, " " * len(mark))
                for mark, item in zip(marks, node)
            )
        if isinstance(node, nodes.block_quote):
            return _prefix(self.blocks(node), "> ", "> ")
        if isinstance(node, nodes.Admonition):
            body = self.blocks(node[1:] if _titled(node) else node)
            return _prefix(f"**{self.title(node)}**\n\n{body}".strip(), "> ", "> ")
        if isinstance(node, nodes.table):
            rows = [
                " | ".join(self.block(entry).replace("|", "\\|") for entry in row)
                for row in node.findall(nodes.row)
            ]
            rows.insert(1, " | ".join(["---"] * len(node.next_node(nodes.row))))
            return "\n".join(f"| {row} |".replace("\n", " ") for row in rows)
        if isinstance(node, BLOCKS):
            return self.blocks(node)
        self.warn(f"no notebook rendering for <{node.tagname}>")
        return node.astext()

    def title(self, node: nodes.Element) -> str:
        """Return an admonition's title as the page shows it (exercises numbered)."""
        text = self.text(node[0]) if _titled(node) else ""
        if isinstance(node, exercise_enumerable_node):
            number = self.fignumbers.get("exercise", {}).get(node["ids"][0], ())
            text = f"Exercise {'.'.join(map(str, number))}{text}"
        return text or node.tagname.replace("_", " ").capitalize()

    def text(self, node: nodes.Element) -> str:
        """Return the Markdown of an element of inline nodes (a paragraph, a title)."""
        return "".join(map(self.inline, node.children))

    def inline(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return ESCAPED.sub(r"\\\1", node.astext())
        if isinstance(node, nodes.literal):
            text = " ".join(node.astext().split())
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            return f"{_ticks(text, 1)}{pad}{text}{pad}{_ticks(text, 1)}"
        if isinstance(node, nodes.math):
            return f"${node.astext()}$"
        inner = self.text(node)
        text = inner.strip()  # marked up, inside the spaces around it
        if isinstance(node, (nodes.emphasis, nodes.strong)) and text:
            mark = "*" if isinstance(node, nodes.emphasis) else "**"
            return inner.replace(text, f"{mark}{text}{mark}", 1)
        if isinstance(node, nodes.reference):
            target = node.get("refuri") or "#" + node.get("refid", "")
            return inner.replace(text, f"[{text}]({urljoin(self.page_url, target)})", 1)
        if not isinstance(node, (*TRANSPARENT, nodes.target)):
            self.warn(f"no notebook rendering for <{node.tagname}>")
        return inner


def doctree_cells(
    doctree: nodes.document,
    executed: nbformat.NotebookNode,
    *,
    page_url: str,
    fignumbers: dict,
    warn: Callable[[str], None],
) -> list[nbformat.NotebookNode]:
    """Return a chapter's notebook cells: Markdown from its resolved ``doctree``, code
    cells from ``executed`` (ValueError if one is not there); links resolve from
    ``page_url``, the hosted page."""
    writer = _Writer(page_url, fignumbers, warn)
    writer.walk(doctree)
    writer.flush()
    code = [i for i, cell in enumerate(executed.cells) if cell.cell_type == "code"]
    cells, done = [], -1
    for cell in writer.cells:
        if isinstance(cell, str):
            cells.append(nbformat.v4.new_markdown_cell(cell))
            continue
        if cell not in code or cell <= done:
            raise ValueError(f"the page's code cell {cell} is not in the notebook")
        # A cell the page removes (tag remove-cell) stays in the notebook, in its place.
        cells += [executed.cells[i] for i in code if done < i <= cell]
        done = cell
    return cells + [executed.cells[i] for i in code if i > done]
