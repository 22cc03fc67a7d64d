"""Rewrite a chapter's MyST-only Markdown as the Markdown that Jupyter renders.

A chapter's Markdown cells use syntax that only Sphinx understands:
directives (```` ```{note} ````, ``:::{exercise}``, ``{literalinclude}``),
roles (``{ref}`label```, ``{doc}`page```), targets (``(label)=``), comments
(``% ...``) and equation labels (``$$ ... $$ (label)``). Jupyter and Colab
would show all of it as raw text. :class:`MarkdownConverter` turns it into
plain Markdown, one cell at a time:

* admonitions and exercises become block quotes with a bold title; a solution
  is kept, between a bold "Solution to Exercise N" and an "end of solution"
  line (the code cells between ``solution-start`` and ``solution-end`` stay
  where they are);
* references and ``{doc}``/``{ref}`` roles become links to the hosted book;
* a ``{glue:text}`` role becomes the value the chapter's cells glued;
* a ``literalinclude`` becomes the code block it shows; images become cell
  attachments; targets and comments are dropped.

What a reference points to, and what a ``literalinclude`` shows, is asked of a
:class:`Resolver` (the Sphinx side lives in ``book_links.py``), so this module
is plain text processing. Anything it does not know is reported through
``Resolver.warn`` (which fails the strict build) and kept as readable text.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Protocol

import yaml


@dataclass(frozen=True)
class Link:
    """Where a reference points: an address, a default title, maybe a number."""

    url: str
    title: str = ""
    number: str = ""


@dataclass(frozen=True)
class Attachment:
    """An image to embed in a Markdown cell (base64 data)."""

    name: str
    mime: str
    data: str


class Resolver(Protocol):
    """What the converter asks of the book."""

    def link(self, kind: str, target: str) -> Link | None:
        """Resolve ``target``; kind is ref, numref, doc, anchor, eq, term, py,
        download or exercise. ``None`` if there is no such target."""

    def literalinclude(self, argument: str, options: dict[str, str]) -> tuple[str, str]:
        """Return the code a ``literalinclude`` shows, and its language."""

    def attachment(self, path: str) -> Attachment | None:
        """Return the image at ``path`` (relative to the chapter)."""

    def warn(self, message: str, subtype: str) -> None:
        """Report something that cannot be converted."""


# ```{name} argument   or   :::{name} argument   (colon fences hold directives only)
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[^}\s]+)\}\s*(?P<argument>.*)$")
TARGET = re.compile(r"^\s*\([^()\s]+\)=\s*$")
COMMENT = re.compile(r"^\s*%")
EQUATION_LABEL = re.compile(r"^(?P<math>.*\$\$)\s*\([^()\s]+\)\s*$")
DEFINITION = re.compile(r"^:\s+(?P<text>\S.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
INLINE = re.compile(
    r"(?P<role>\{(?P<name>[A-Za-z][\w:+.-]*)\}(?P<rticks>`+)(?P<content>.+?)(?P=rticks))"
    r"|(?P<code>(?P<cticks>`+).+?(?P=cticks))"
    r"|(?P<math>\$\$.+?\$\$|\$[^$\n]+\$)"
    r"|(?P<link>(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^()\s]+)\))",
    re.DOTALL,
)
EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "todo": "To do",
}
# Directives whose argument is their title, rendered as a titled block quote.
TITLED_BLOCKS = {"admonition", "dropdown", "margin", "sidebar", "topic", "toggle"}
QUOTES = {"epigraph", "pull-quote", "highlights"}
CODE_BLOCKS = {"code-block", "code", "sourcecode"}
DROPPED = {"index", "contents", "tableofcontents", "meta"}
PY_ROLES = {"func", "meth", "class", "mod", "attr", "data", "exc", "obj", "const", "type"}
LITERAL_ROLES = {
    "code",
    "literal",
    "samp",
    "file",
    "kbd",
    "command",
    "program",
    "envvar",
    "option",
    "abbr",
}
LINK_ROLES = {"ref", "numref", "doc", "eq", "term", "download"}


def _fence_for(code: str) -> str:
    """Return a backtick fence longer than any run of backticks inside ``code``."""
    longest = max((len(run) for run in re.findall("`+", code)), default=0)
    return "`" * max(3, longest + 1)


def _quote(lines: list[str]) -> list[str]:
    return [f"> {line}".rstrip() for line in lines]


def _split_options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split a directive body into its options (``:key: value`` or YAML) and content."""
    options: dict[str, str] = {}
    rest = body
    if body and body[0].strip() == "---":
        end = next((i for i in range(1, len(body)) if body[i].strip() == "---"), None)
        if end is not None:
            loaded = yaml.safe_load("\n".join(body[1:end])) or {}
            options = {str(k): "" if v is None else str(v) for k, v in loaded.items()}
            rest = body[end + 1 :]
    else:
        count = 0
        while count < len(body) and (match := OPTION.match(body[count])):
            options[match["key"]] = match["value"].strip()
            count += 1
        rest = body[count:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    return options, rest


class MarkdownConverter:
    """Convert the Markdown cells of one chapter, in order.

    One converter serves a whole chapter because a solution spans cells:
    it opens in one Markdown cell and closes in a later one.
    """

    def __init__(self, resolver: Resolver, glue: dict[str, str] | None = None) -> None:
        self.resolver = resolver
        self.glue = glue or {}
        self._exercises = 0
        self._open_solution: str | None = None
        self._attachments: dict[str, dict[str, str]] = {}

    def convert(self, text: str) -> tuple[str, dict[str, dict[str, str]]]:
        """Return the cell's Markdown and its attachments (``{name: {mime: data}}``)."""
        self._attachments = {}
        lines = self._block(text.splitlines())
        markdown = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
        return markdown, self._attachments

    def finish(self) -> None:
        """Report a solution that was started but never ended."""
        if self._open_solution is not None:
            self.resolver.warn(f"solution of {self._open_solution} has no solution-end", "solution")

    # -- blocks -----------------------------------------------------------------
    def _block(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(self._inline("\n".join(paragraph)).split("\n"))
                paragraph.clear()

        i = 0
        while i < len(lines):
            line = lines[i]
            fence = FENCE.match(line)
            if fence and (fence["fence"][0] != ":" or DIRECTIVE.match(fence["info"].strip())):
                flush()
                end = self._closing_fence(lines, i, fence["fence"])
                inner = lines[i + 1 : end]
                directive = DIRECTIVE.match(fence["info"].strip())
                if directive:
                    indent = fence["indent"]
                    body = textwrap.dedent("\n".join(inner)).split("\n") if inner else []
                    converted = self._directive(directive["name"], directive["argument"], body)
                    out.extend(f"{indent}{x}".rstrip() for x in converted)
                else:  # a plain code block: copied untouched
                    out.extend(lines[i : end + 1])
                i = end + 1
                continue
            if TARGET.match(line) or COMMENT.match(line):
                i += 1
                continue
            if label := EQUATION_LABEL.match(line):
                line = label["math"]
            if (definition := DEFINITION.match(line)) and paragraph and paragraph[-1].strip():
                term = paragraph.pop().strip()
                paragraph.append(f"- **{term}**: {definition['text']}")
                i += 1
                continue
            if not line.strip():
                flush()
                out.append("")
            else:
                paragraph.append(line)
            i += 1
        flush()
        return out

    @staticmethod
    def _closing_fence(lines: list[str], start: int, fence: str) -> int:
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        return next(
            (k for k in range(start + 1, len(lines)) if closing.match(lines[k])), len(lines)
        )

    def _directive(self, name: str, argument: str, body: list[str]) -> list[str]:
        options, content = _split_options(body)
        name = name.lower()
        if name in ADMONITIONS:
            # These take no argument: text on the opening line is content.
            content = ([argument] if argument else []) + content
            return self._titled(ADMONITIONS[name], content)
        if name in TITLED_BLOCKS:
            return self._titled(argument or name.capitalize(), content)
        if name in QUOTES:
            return _quote(self._block(content))
        if name == "exercise":
            return self._exercise(argument, options, content)
        if name in {"solution-start", "solution"}:
            return self._solution_start(argument, content, gated=name == "solution-start")
        if name == "solution-end":
            return self._solution_end()
        if name == "math":
            return ["$$", *([argument] if argument else []), *content, "$$"]
        if name in CODE_BLOCKS:
            return self._code("\n".join(content), argument.strip())
        if name == "literalinclude":
            return self._literalinclude(argument, options)
        if name in {"image", "figure"}:
            return self._image(argument, options, content)
        if name == "raw":
            return content if argument.strip() == "html" else []
        if name in DROPPED:
            return []
        if name == "list-table":
            return self._list_table(argument, options, content)
        self.resolver.warn(f"no notebook rendering for the directive {{{name}}}", "directive")
        return self._titled(argument or name, content)

    def _titled(self, title: str, content: list[str]) -> list[str]:
        title = self._inline(title)
        return _quote([f"**{title}**", "", *self._block(content)] if content else [f"**{title}**"])

    def _exercise_number(self, label: str) -> str:
        link = self.resolver.link("exercise", label) if label else None
        return link.number if link and link.number else ""

    def _exercise(self, argument: str, options: dict[str, str], content: list[str]) -> list[str]:
        self._exercises += 1
        if "nonumber" in options:
            number = ""
        else:
            number = self._exercise_number(options.get("label", "")) or str(self._exercises)
        title = f"Exercise {number}".strip()
        if argument:
            title += f" ({self._inline(argument)})"
        return _quote([f"**{title}**", "", *self._block(content)])

    def _solution_start(self, label: str, content: list[str], *, gated: bool) -> list[str]:
        label = label.strip()
        number = self._exercise_number(label)
        if not number:
            self.resolver.warn(f"solution refers to an unknown exercise {label!r}", "solution")
        exercise = f"Exercise {number}".strip()
        head = [f"**Solution to {exercise}** (try the exercise first)", ""]
        if gated:
            self._open_solution = exercise
            return head + self._block(content)
        return head + self._block(content) + ["", f"*End of the solution to {exercise}.*"]

    def _solution_end(self) -> list[str]:
        if self._open_solution is None:
            self.resolver.warn("solution-end without a solution-start", "solution")
            return []
        exercise, self._open_solution = self._open_solution, None
        return [f"*End of the solution to {exercise}.*"]

    @staticmethod
    def _code(code: str, language: str) -> list[str]:
        fence = _fence_for(code)
        return [f"{fence}{language}", *code.rstrip("\n").split("\n"), fence]

    def _literalinclude(self, argument: str, options: dict[str, str]) -> list[str]:
        code, language = self.resolver.literalinclude(argument.strip(), options)
        caption = options.get("caption")
        if "caption" not in options:
            return self._code(code, language)
        return [f"**{self._inline(caption or argument.strip())}**", "", *self._code(code, language)]

    def _image(self, argument: str, options: dict[str, str], caption: list[str]) -> list[str]:
        path = argument.strip()
        alt = options.get("alt", "")
        if URL_SCHEME.match(path):
            src = path
        else:
            attachment = self.resolver.attachment(path)
            if attachment is None:
                self.resolver.warn(f"image not found: {path}", "image")
                return [f"*[image: {alt or path}]*"]
            self._attachments[attachment.name] = {attachment.mime: attachment.data}
            src = f"attachment:{attachment.name}"
        lines = [f"![{alt}]({src})"]
        if caption:
            lines += ["", *self._block(caption)]
        return lines

    def _list_table(self, argument: str, options: dict[str, str], content: list[str]) -> list[str]:
        rows: list[list[str]] = []
        for line in content:
            if re.match(r"^[*-] - ", line):
                rows.append([line[4:].strip()])
            elif re.match(r"^\s+- ", line) and rows:
                rows[-1].append(line.strip()[2:].strip())
            elif line.strip() and rows:
                rows[-1][-1] += " " + line.strip()
        if not rows:
            self.resolver.warn("empty list-table", "directive")
            return []
        width = max(len(row) for row in rows)
        rows = [
            [self._inline(cell).replace("|", "\\|") for cell in row] + [""] * (width - len(row))
            for row in rows
        ]
        table = [f"| {' | '.join(rows[0])} |", "|" + " --- |" * width]
        table += [f"| {' | '.join(row)} |" for row in rows[1:]]
        return ([f"**{self._inline(argument)}**", ""] if argument else []) + table

    # -- inline -----------------------------------------------------------------
    def _inline(self, text: str) -> str:
        return INLINE.sub(self._inline_match, text)

    def _inline_match(self, match: re.Match[str]) -> str:
        if match["code"] or match["math"]:  # left as they are
            return match[0]
        if match["link"]:
            return self._markdown_link(match["bang"], match["text"], match["target"])
        return self._role(match["name"], match["content"])

    def _role(self, name: str, content: str) -> str:
        domain, _, kind = name.rpartition(":")
        kind = kind.lower()
        content = " ".join(content.split()) if kind != "math" else content
        explicit = EXPLICIT_TITLE.match(content)
        title, target = (explicit["title"], explicit["target"]) if explicit else ("", content)
        if kind == "math":
            return f"${content}$"
        if domain == "glue" or name == "glue":
            return self._glue(content)
        if kind in {"sub", "sup"}:
            return f"<{kind}>{content}</{kind}>"
        if kind in LITERAL_ROLES and domain in {"", "std"}:
            return f"`{title or target}`"
        if kind in PY_ROLES or domain == "py":
            return self._python_role(kind, title, target)
        if kind in LINK_ROLES:
            return self._link_role(kind, title, target)
        self.resolver.warn(f"no notebook rendering for the role {{{name}}}", "role")
        return title or target

    def _glue(self, content: str) -> str:
        """Paste a glued value as myst-nb's ``{glue:text}`key:format``` does."""
        key, _, spec = content.partition(":")
        if key not in self.glue:
            self.resolver.warn(f"no glued value named {key!r}", "glue")
            return key
        try:
            value = ast.literal_eval(self.glue[key])
        except (SyntaxError, ValueError):
            value = self.glue[key]
        if not spec:
            return str(value)
        kind = spec[-1]
        if kind in "bcdoxX":
            value = int(value)
        elif kind in "eEfFgGn%":
            value = float(value)
        return format(value, spec)

    def _python_role(self, kind: str, title: str, target: str) -> str:
        name = target.lstrip("~!.")
        shown = title or (name.rsplit(".", 1)[-1] if target.startswith("~") else name)
        if kind in {"func", "meth"} and not title:
            shown += "()"
        link = self.resolver.link("py", name)
        return f"[`{shown}`]({link.url})" if link else f"`{shown}`"

    def _link_role(self, kind: str, title: str, target: str) -> str:
        link = self.resolver.link(kind, target)
        if link is None:
            self.resolver.warn(f"{{{kind}}} target not found: {target}", kind)
            return title or target
        if kind == "eq":
            return f"[({link.number})]({link.url})"
        if kind == "numref":
            template = title or (f"{link.title} %s" if link.title else "%s")
            text = template.replace("%s", link.number).replace("{number}", link.number)
            return f"[{text}]({link.url})"
        text = title or link.title or target
        return f"[{text}]({link.url})"

    def _markdown_link(self, bang: str, text: str, target: str) -> str:
        if URL_SCHEME.match(target) and not target.startswith(("project:", "path:")):
            return f"{bang}[{self._inline(text)}]({target})"
        if bang:
            lines = self._image(target, {"alt": text}, [])
            return lines[0]
        target = target.split(":", 1)[1] if target.startswith(("project:", "path:")) else target
        if target.startswith("#"):
            link = self.resolver.link("ref", target[1:]) or self.resolver.link("anchor", target[1:])
        else:
            link = self.resolver.link("doc", target)
        if link is None:
            self.resolver.warn(f"link target not found: {target}", "link")
            return f"[{self._inline(text)}]({target})" if text else target
        return f"[{self._inline(text) or link.title or target}]({link.url})"
