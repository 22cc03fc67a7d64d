"""Check and tidy each chapter's cell outputs, right after execution or the cache.

* A cell that raised: the terminal shows the chapter and line, the cell's
  source and its traceback; one that timed out: its timeout and the setting.
  The build exits non-zero, even without ``-W``.
* A Python warning printed by a cell is a build warning, unless the cell is
  tagged ``allow-warnings``: the page then shows it without its file name.
* Each stream's printed chunks are joined byte for byte: myst-nb strips each
  chunk, and the kernel's chunks depend on timing.

A chapter that failed or warned is read again on the next build, so it is
reported again. Needs ``nb_execution_raise_on_error = False``: an exception
in a parallel worker would discard the worker's log, this report included.
"""

import copy
import re
import shutil
import textwrap
from contextlib import contextmanager
from pathlib import Path

import myst_nb.sphinx_
from myst_nb.core.utils import coalesce_streams
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx

TAG = "allow-warnings"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# "{file}:{line}: {Category}: {message}" and the source line Python echoes after it.
WARNING = re.compile(
    r"^\S[^\n]*?:\d+: (?P<text>\w*Warning: [^\n]*\n?)(?:  [^\n]*\n?)?", re.M
)
_create_client = myst_nb.sphinx_.create_client


def merge_streams(outputs: list) -> list:
    """Return ``outputs`` with each stream's chunks joined into its first, then
    tidied by myst-nb (which, given one chunk, only applies ``\\r`` and ends lines)."""
    merged, first = [], {}
    for output in outputs:
        name = output.get("name") if output.get("output_type") == "stream" else None
        if name in first:
            first[name]["text"] += output["text"]
            continue
        if name:
            first[name] = output = copy.copy(output)
        merged.append(output)
    return coalesce_streams(merged)


def _indent(text: str) -> str:
    return textwrap.indent(ANSI.sub("", text).rstrip(), "    ")


def _report_failure(client, result: dict) -> None:
    """Log the failing cell's source and traceback, or its timeout."""
    cells = client.notebook.cells
    # nbclient stops at the cell that failed.
    index = max((i for i, c in enumerate(cells) if c.get("execution_count")), default=0)
    where = f"code cell {sum(c.cell_type == 'code' for c in cells[: index + 1])}"
    source = _indent(cells[index].source)
    if result["error"] == "CellTimeoutError":
        execution = client.notebook.metadata.get("execution", {})  # the front matter's
        timeout = execution.get("timeout", client.nb_config.execution_timeout)
        report = (
            f"{where} timed out after {timeout} s (nb_execution_timeout in conf.py, "
            f"or `execution: timeout:` in the chapter's front matter):\n{source}"
        )
    else:
        errors = [o for o in cells[index].outputs if o.output_type == "error"]
        trace = "\n".join(errors[-1].traceback) if errors else result["traceback"]
        report = f"{where} raised an exception:\n{source}\n\n{_indent(trace)}"
    client.logger.warning(report, subtype="cell_error", line=client.cell_line(index))


def _check_cells(client) -> bool:
    """Merge streams, report or tidy warnings; return True if a cell warned."""
    warned = False
    code = [i for i, c in enumerate(client.notebook.cells) if c.cell_type == "code"]
    for number, index in enumerate(code, 1):
        cell = client.notebook.cells[index]
        cell.outputs = merge_streams(cell.outputs)
        for output in (o for o in cell.outputs if o.get("name") == "stderr"):
            if TAG in cell.metadata.get("tags", []):
                output["text"] = WARNING.sub(r"\g<text>", output["text"])
                continue
            for match in WARNING.finditer(output["text"]):
                warned = True
                client.logger.warning(
                    f"code cell {number} raised {match['text'].strip()} "
                    f"(tag the cell {TAG!r} to show it on purpose)",
                    subtype="cell_warning",
                    line=client.cell_line(index),
                )
    return warned


def setup(app: Sphinx) -> dict:
    @contextmanager
    def checked_client(notebook, source, nb_config, logger, read_fmt=None):
        with _create_client(notebook, source, nb_config, logger, read_fmt) as client:
            result = client.exec_metadata
            if failed := bool(result and not result["succeeded"]):
                _report_failure(client, result)
            warned = _check_cells(client)
            # myst-nb saves `notebook` to jupyter_execute/, but a cache hit puts the
            # outputs in a copy: save those (as the page shows them) too.
            if client.notebook is not notebook:
                notebook.update(client.notebook)
            status = "failed" if failed else "warned" if warned else ""
            NbMetadataCollector.set_doc_data(app.env, app.env.docname, "cells", status)
            yield client

    def flagged(env, *statuses: str) -> set[str]:
        data = NbMetadataCollector.get_doc_data(env)
        return {d for d, m in data.items() if m.get("cells") in statuses}

    def read_again(app: Sphinx, env, added, changed, removed) -> list[str]:
        return sorted(flagged(env, "failed", "warned") & env.found_docs)

    def finished(app: Sphinx, exception: Exception | None) -> None:
        if exception is None and flagged(app.env, "failed"):
            app.statuscode = 1
        elif exception is None:  # myst-nb's logs of earlier failures hold machine paths
            shutil.rmtree(Path(app.outdir, "reports"), ignore_errors=True)

    myst_nb.sphinx_.create_client = checked_client
    app.connect("env-get-outdated", read_again)
    app.connect("build-finished", finished)
    # A new env_version re-reads every page (2: a chapter's status is a string).
    return {"env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
