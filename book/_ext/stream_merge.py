"""Merge a cell's printed output into one block, exactly as it was printed.

The kernel sends stdout in chunks whose boundaries depend on timing: one
``print(a, b)`` may arrive as ``"a"`` and ``" b\\n"``. myst-nb's
``coalesce_streams`` strips every chunk and adds a newline, so a line can be
broken in two on one build and not on the next. Here the chunks of each
stream are concatenated first, byte for byte, and only then handed to
myst-nb's function (which then sees one chunk per stream and only tidies the
end and the carriage returns). The page shows what the code printed, the same
on every build.
"""

from __future__ import annotations

import copy

import myst_nb.core.render
from myst_nb.core.utils import coalesce_streams as _myst_nb_coalesce
from sphinx.application import Sphinx


def merge_streams(outputs: list) -> list:
    """Return ``outputs`` with each stream's chunks joined into its first chunk."""
    merged, streams = [], {}
    for output in outputs or []:
        if output.get("output_type") == "stream":
            if output["name"] in streams:
                streams[output["name"]]["text"] += output["text"]
                continue
            output = copy.copy(output)
            streams[output["name"]] = output
        merged.append(output)
    return _myst_nb_coalesce(merged)


def setup(app: Sphinx) -> dict:
    myst_nb.core.render.coalesce_streams = merge_streams
    return {"parallel_read_safe": True, "parallel_write_safe": True}
