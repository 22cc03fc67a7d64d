"""Hand a computed value to the text of a book page: ``glue`` without myst-nb.

A chapter quotes a number in its prose with myst-nb's ``{glue:text}`` role,
so that the text and the computation cannot drift apart. myst-nb's own
``glue`` would make every downloaded notebook import myst-nb; this one writes
the same output (a display whose MIME types carry myst-nb's prefix and whose
metadata names the value) with IPython alone, and does nothing outside a
kernel. :func:`name_list` writes a list of names into such a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

GLUE_PREFIX = "application/papermill.record/"
"""The MIME-type prefix under which myst-nb looks for glued values."""


def glue(name: str, value: object) -> None:
    """Record ``value`` under ``name`` for a ``{glue:text}`name``` role on the page.

    Nothing is shown in the cell's output. A number keeps its type, so the
    role can format it (``{glue:text}`name:.2f```).

    Args:
        name: The key the page uses; unique within a chapter.
        value: The value; its ``repr`` is what the page reads.

    Raises:
        TypeError: If ``name`` is not a non-empty string.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display
    except ImportError:  # not in a kernel: nobody reads the value
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display(
        {GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata
    )


def name_list(names: Sequence[str]) -> str:
    """Return ``names`` as they read in a sentence: "a", "a and b", "a, b and c".

    For the sentences a page writes from its results, whichever they are.

    Args:
        names: One name or more.

    Raises:
        ValueError: If ``names`` is empty.
    """
    names = list(names)
    if not names:
        raise ValueError("names must hold at least one name, got none")
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
