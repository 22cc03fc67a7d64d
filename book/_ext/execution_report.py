"""Report failing, timed-out and warning cells in the terminal, per chapter.

myst-nb reports a failed execution as one line and the path of a log file,
and puts a Python warning printed by a cell on the page with the kernel's
temporary file name (``/tmp/ipykernel_…/….py:3: UserWarning: …``). This
extension looks at each notebook right after it is executed or taken from the
cache, before it is rendered:

* a cell that raised: logs the chapter, the cell's line, its source and the
  Python traceback; a cell that timed out: the chapter, the cell and the
  timeout setting. The build then exits non-zero, even without ``-W``;
* a Python warning printed by a cell: logs its text, so a strict build fails.
  A cell tagged ``allow-warnings`` shows its warnings on purpose; the page
  then shows ``UserWarning: text`` without the file name.

A chapter that failed or warned is read again on the next build, so the
problem is reported again rather than hidden by Sphinx's environment.

Needs ``nb_execution_raise_on_error = False``: an exception in a parallel
(``-j``) worker would discard that worker's log, this report included.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from contextlib import contextmanager
from pathlib import Path

import myst_nb.sphinx_
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx

TAG = "allow-warnings"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# "{file}:{line}: {Category}: {message}" and the source line Python echoes after it.
WARNING = re.compile(r"^\S[^\n]*?:\d+: (?P<text>\w*Warning: [^\n]*\n?)(?:  [^\n]*\n?)?", re.M)

_create_client = myst_nb.sphinx_.create_client
_app: Sphinx | None = None


def _indent(text: str) -> str:
    return textwrap.indent(ANSI.sub("", text).rstrip(), "    ")


def _failure(client, result: dict) -> tuple[str, int | None]:
    """Return the report of a failed execution and the failing cell's line."""
    ran = [i for i, c in enumerate(client.notebook.cells) if c.get("execution_count")]
    if not ran:
        return f"the notebook failed to execute:\n{_indent(result['traceback'] or '')}", None
    index = ran[-1]  # nbclient stops at the cell that failed
    cells = client.notebook.cells
    cell = cells[index]
    number = sum(c.get("cell_type") == "code" for c in cells[: index + 1])
    where = f"code cell {number}"  # the warning's location gives the line
    if result["error"] == "CellTimeoutError":
        timeout = client.notebook.metadata.get("execution", {}).get(
            "timeout", client.nb_config.execution_timeout
        )
        return (
            f"{where} timed out after {timeout} s (nb_execution_timeout in conf.py; "
            f"a chapter may set `execution: timeout:` in its front matter):\n"
            f"{_indent(cell.source)}",
            client.cell_line(index),
        )
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    trace = "\n".join(errors[-1]["traceback"]) if errors else result["traceback"] or ""
    return f"{where} raised an exception:\n{_indent(cell.source)}\n\n{_indent(trace)}", (
        client.cell_line(index)
    )


def _check_warnings(client) -> bool:
    """Report un-tagged warnings; strip file names from tagged ones. True if any warned."""
    warned = False
    code = [i for i, c in enumerate(client.notebook.cells) if c.get("cell_type") == "code"]
    for number, index in enumerate(code, 1):
        cell = client.notebook.cells[index]
        stderr = [o for o in cell.get("outputs", []) if o.get("name") == "stderr"]
        if not stderr:
            continue
        text = "".join(o["text"] for o in stderr)
        if TAG in cell.get("metadata", {}).get("tags", []):
            first = stderr[0]  # one chunk, so no warning is split between two
            first["text"] = WARNING.sub(r"\g<text>", text)
            cell.outputs = [o for o in cell.outputs if o.get("name") != "stderr" or o is first]
            continue
        for match in WARNING.finditer(text):
            warned = True
            client.logger.warning(
                f"code cell {number} raised {match['text'].strip()} "
                f"(tag the cell {TAG!r} to show it on purpose)",
                subtype="cell_warning",
                line=client.cell_line(index),
            )
    return warned


@contextmanager
def _reporting_client(notebook, source, nb_config, logger, read_fmt=None):
    with _create_client(notebook, source, nb_config, logger, read_fmt) as client:
        result = client.exec_metadata
        if result and not result["succeeded"]:
            report, line = _failure(client, result)
            client.logger.warning(report, subtype="cell_error", line=line)
        warned = _check_warnings(client)
        if _app is not None:
            NbMetadataCollector.set_doc_data(_app.env, _app.env.docname, "cells_warned", warned)
        yield client


def _failed(app: Sphinx) -> list[str]:
    """Return the documents whose last execution failed."""
    data = NbMetadataCollector.get_doc_data(app.env)
    return [d for d, m in data.items() if not (m.get("exec_data") or {}).get("succeeded", True)]


def _read_again(app: Sphinx, env, added, changed, removed) -> list[str]:
    data = NbMetadataCollector.get_doc_data(env)
    again = set(_failed(app)) | {d for d, m in data.items() if m.get("cells_warned")}
    return sorted(again & env.found_docs)


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and _failed(app):
        app.statuscode = 1
    elif exception is None:  # myst-nb's logs of earlier failures hold machine paths
        shutil.rmtree(Path(app.outdir, "reports"), ignore_errors=True)


def setup(app: Sphinx) -> dict:
    global _app
    _app = app
    myst_nb.sphinx_.create_client = _reporting_client
    app.connect("env-get-outdated", _read_again)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
