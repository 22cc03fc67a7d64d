"""The pictures of the FlashAttention chapter: what moves between memory and chip.

``traffic_figure`` draws, for several sequence lengths, how many bytes each
way of computing attention moves between a GPU's main memory and the chip:
bars side by side, one group per length, on a logarithmic scale, because the
counts grow with the square of the length. ``forward_program_figure`` and
``backward_program_figure`` draw, to scale, main memory cut into blocks and
the on-chip tiles of one program of the forward kernel and of
``_backward_keys``, with arrows for what the program reads and writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.path import Path


def traffic_figure(
    lengths: Sequence[int],
    mib: Mapping[str, Sequence[float]],
    *,
    title: str = "Bytes moved between main memory and the chip",
) -> Figure:
    """Draw grouped bars: for each length, the MiB each method moves.

    Each bar is labelled with its value, to two decimals, so the picture can
    be read without the table it comes from.

    Args:
        lengths: The sequence lengths, one group of bars each.
        mib: For each method, in the order of the legend, its MiB at each
            length.
        title: The title.

    Returns:
        The figure, with one axes whose containers hold the bars, one
        container per method.

    Raises:
        ValueError: If a method has not one value per length, or a value is
            not positive (the scale is logarithmic).
    """
    for name, values in mib.items():
        if len(values) != len(lengths):
            raise ValueError(
                f"mib[{name!r}] must have one value per length ({len(lengths)}), "
                f"got {len(values)}"
            )
        if min(values) <= 0:
            raise ValueError(f"mib[{name!r}] must be positive, got {list(values)}")
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    x = np.arange(len(lengths))
    width = 0.8 / len(mib)
    for n, (name, values) in enumerate(mib.items()):
        bars = ax.bar(x + (n - (len(mib) - 1) / 2) * width, values, width, label=name)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, [f"L = {L}" for L in lengths])
    ax.set(ylabel="MiB read and written", title=title)
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig


def _check_blocks(L: int, block: int, d: int, index: int, what: str) -> None:
    """Fail early unless ``L`` rows cut into blocks and ``index`` is one of them."""
    if min(L, block, d) < 1 or L % block:
        raise ValueError(
            f"L, block and d must be positive and block must divide L, "
            f"got L={L}, block={block}, d={d}"
        )
    if not 0 <= index < L // block:
        raise ValueError(f"{what} must be in [0, {L // block}), got {index}")


def _main_memory(ax: Axes, width: float, L: int, block: int, columns) -> None:
    """Draw main memory: ``(x, name, highlighted block, colour, width)`` columns.

    Every column is cut into blocks of ``block`` rows, each a ``Rectangle``
    labelled ``"NAME block B"``; the highlighted one takes the column's colour.
    """
    _dashed(ax, (5, -33), width, L + 45)
    ax.text(
        5 + width / 2, L + 8, "GPU main memory: large, slow", ha="center", fontsize=9
    )
    for x, name, highlight, colour, w in columns:
        for b in range(L // block):
            face = colour if b == highlight else "0.85"
            label = f"{name} block {b}"
            _tile(ax, (x, b * block), w, block, face, label, linewidth=0.8)
        ax.text(x + w / 2, -4, name, ha="center", fontsize=10)


def _route(ax: Axes, points, colour: str) -> None:
    """Draw an arrow along straight segments, through the gaps between columns."""
    arrow = FancyArrowPatch(path=Path(points), arrowstyle="-|>", mutation_scale=12,
                            color=colour, linewidth=1.5)  # fmt: skip
    ax.add_patch(arrow)


def _tile(ax: Axes, xy, w: float, h: float, colour: str, label: str, **kw) -> None:
    """Draw one block or tile, ``w`` wide and ``h`` tall, labelled for tests."""
    ax.add_patch(Rectangle(xy, w, h, facecolor=colour, edgecolor="k", label=label,
                           **kw))  # fmt: skip


def _dashed(ax: Axes, xy, w: float, h: float) -> None:
    """Draw the dashed outline of a memory."""
    ax.add_patch(Rectangle(xy, w, h, facecolor="none", edgecolor="0.4", linestyle="--"))


def _lines(ax: Axes, x: float, y: float, *lines: str, **kw) -> None:
    """Write ``lines`` of small text one under the other from ``(x, y)``."""
    for i, line in enumerate(lines):
        ax.text(x, y + 9 * i, line, fontsize=8, **kw)


def _memory_axes(L: int, right: float) -> tuple[Figure, Axes]:
    """Make the figure and axes of a memory picture, ``y`` down, no frame."""
    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.set_xlim(0, right)
    ax.set_ylim(-38, L + 45)
    ax.invert_yaxis()
    ax.axis("off")
    return fig, ax


def _key(ax: Axes, x: float, *lines: str) -> None:
    """Write the arrows' key under the on-chip memory, in the arrows' colours."""
    for i, (line, colour) in enumerate(zip(lines, ("C0", "C1", "C2"))):
        _lines(ax, x, 140 + 9 * i, "→ " + line, color=colour)


def forward_program_figure(L: int, block: int, d: int, *, program: int) -> Figure:
    """Draw main memory and the on-chip tiles of one forward program, to scale.

    Left, main memory holds ``Q``, ``K``, ``V`` and the output ``O``, ``d``
    wide, and a narrower column of log-sum-exps, each ``L`` rows cut into
    blocks of ``block``. Right, the on-chip memory of the program holds a
    ``Q`` tile and a ``K, V`` tile, ``block × d``, and a ``block × block``
    tile of scores. Arrows show what the program reads (its query block,
    then every key and value block) and writes (its block of ``O`` and of
    the log-sum-exp). The layout is drawn for the book's sizes, ``L`` = 128,
    ``block`` = 32 and ``d`` = 16.

    Args:
        L: Rows of every tensor in main memory.
        block: Rows per block, and the side of the tile of scores.
        d: Width of a query, key, value and output row.
        program: Index of the program, that is, of its query block, from 0.

    Returns:
        The figure. Each block in main memory is a ``Rectangle`` labelled
        ``"NAME block B"`` (``NAME`` one of ``Q``, ``K``, ``V``, ``O``,
        ``lse``); the on-chip tiles are labelled ``"Q tile"``, ``"K, V tile"``
        and ``"scores"``; the four arrows are ``FancyArrowPatch`` objects.

    Raises:
        ValueError: If a size is not positive, ``block`` does not divide
            ``L`` or ``program`` is not a block index.
    """
    _check_blocks(L, block, d, program, "program")
    fig, ax = _memory_axes(L, 425)
    columns = [(15, "Q", program, "C0", d), (65, "K", 0, "C1", d)]
    columns += [(115, "V", 0, "C1", d), (165, "O", program, "C2", d)]
    columns.append((217, "lse", program, "C2", 8))
    _main_memory(ax, 225, L, block, columns)

    _dashed(ax, (255, 8), 165, 100)
    _lines(ax, 337, 102, "on-chip memory of one program: small, fast", ha="center")
    tiles = [(270, "C0", "Q tile", d), (315, "C1", "K, V tile", d)]
    for x, colour, name, width in [*tiles, (360, "0.95", "scores", block)]:
        _tile(ax, (x, 20), width, block, colour, name)
        _lines(ax, x + width / 2, 62, name, ha="center")
    _lines(ax, 360 + block / 2, 20 + block / 2, f"{block} × {block}", ha="center",
           va="center")  # fmt: skip
    ax.text(270 + d / 2, 20 + block / 2, f"{block}\n×\n{d}", ha="center",
            va="center", fontsize=7)  # fmt: skip
    _lines(ax, 270, 82, "running_max, running_sum, acc:",
           "per query: two numbers, one row")  # fmt: skip

    top = program * block
    # arrows leave and enter a block at its middle row
    mid = block / 2
    # the query block: out to the right of Q, up above the labels, into the Q tile
    q_path = [(15 + d, top + mid), (24 + d, top + mid), (24 + d, -16)]
    _route(ax, [*q_path, (270 + d / 2, -16), (270 + d / 2, 20)], "C0")
    # the key and value blocks: up from K and from V, into the K, V tile
    kv_path = [(65 + d, mid), (74 + d, mid), (74 + d, -26), (315 + d / 2, -26)]
    _route(ax, [*kv_path, (315 + d / 2, 20)], "C1")
    # V joins
    ax.plot([115 + d, 124 + d, 124 + d], [mid, mid, -26], color="C1", linewidth=1.5)
    # the log-sum-exp block: back from the accumulator, in from the right
    _route(ax, [(268, 80), (240, 80), (240, top + mid), (225, top + mid)], "C2")
    # the output block: down, under the columns, up the gap between O and lse
    o_path = [(240, 80), (240, L + 3), (207, L + 3), (207, top + mid)]
    _route(ax, [*o_path, (165 + d, top + mid)], "C2")
    _key(ax, 262, "the query block: read once",
         "each key and value block: read in turn",
         "its rows of O and of the log-sum-exp: written once")  # fmt: skip
    ax.set_title(
        f"One program of the forward kernel: query block {program} "
        f"(counting from 0) of {L // block}, blocks of {block} rows, d = {d}",
        fontsize=10,
    )
    return fig


def backward_program_figure(L: int, block: int, d: int, *, key_block: int) -> Figure:
    """Draw main memory and the on-chip tiles of one ``_backward_keys`` program.

    Left, main memory holds ``Q``, ``dO``, a narrow column of log-sum-exps
    and one of deltas (``δ``), ``K``, ``V``, ``dK`` and ``dV``, each ``L``
    rows cut into blocks of ``block``; the query side is drawn at block 0,
    the one that streams past, the key side at ``key_block``. Right, the
    on-chip memory of the program: the ``K, V`` and ``dK, dV`` tiles it
    keeps for the whole loop, the ``Q, dO`` tile of the current query block
    and three ``block × block`` tiles recomputed from it, ``P``, ``dP`` and
    ``dS``. The layout is drawn for the book's sizes, ``L`` = 128,
    ``block`` = 32 and ``d`` = 32.

    Args:
        L: Rows of every tensor in main memory.
        block: Rows per block, and the side of the square tiles.
        d: Width of a query, key, value and gradient row.
        key_block: Index of the program's key block, from 0.

    Returns:
        The figure. Each block in main memory is a ``Rectangle`` labelled
        ``"NAME block B"``; the on-chip tiles are labelled ``"K, V"``,
        ``"dK, dV"``, ``"Q, dO"``, ``"P"``, ``"dP"`` and ``"dS"``; the four
        arrows are ``FancyArrowPatch`` objects.

    Raises:
        ValueError: If a size is not positive, ``block`` does not divide
            ``L`` or ``key_block`` is not a block index.
    """
    _check_blocks(L, block, d, key_block, "key_block")
    fig, ax = _memory_axes(L, 545)
    # main memory, left: the query side streams (block 0 shown), the key side stays
    x = {"Q": 12, "dO": 50, "lse": 96, "δ": 120, "K": 140, "V": 180, "dK": 230}
    x["dV"] = 280
    columns = [(x[n], n, 0, "C0", d) for n in ("Q", "dO")]
    columns += [(x[n], n, 0, "C0", 8) for n in ("lse", "δ")]
    columns += [(x[n], n, key_block, "C1", d) for n in ("K", "V")]
    columns += [(x[n], n, key_block, "C2", d) for n in ("dK", "dV")]
    _main_memory(ax, 330, L, block, columns)

    _dashed(ax, (350, 8), 190, 115)
    # bottom right, between the dK, dV arrow and the box's edge at 540
    _lines(ax, 424, 110, "on-chip memory of one", "program: small, fast")
    for x0, colour, name in [
        (360, "C1", "K, V"),
        (400, "C2", "dK, dV"),
        (445, "C0", "Q, dO"),
    ]:
        _tile(ax, (x0, 20), d, block, colour, name)
        _lines(ax, x0 + d / 2, 62, name, ha="center")
    _lines(ax, 356, 76, "kept for the", "whole loop")
    for i, name in enumerate(("P", "dP", "dS")):
        _tile(ax, (485 + 4 * i, 20 + 4 * i), block, block, "0.95", name)
    _lines(ax, 505, 66, "P, dP, dS", ha="center")
    _lines(ax, 445, 76, "per query block:", "read, recomputed,", "then dropped")

    top = key_block * block
    mid = block / 2
    # the query side: up from Q, dO, lse and delta, along the top, into the Q tile
    q_path = [(x["δ"] + 8, mid), (134, mid), (134, -18), (445 + d / 2, -18)]
    _route(ax, [*q_path, (445 + d / 2, 20)], "C0")
    for x_end, x_gap in ((x["Q"] + d, 47), (x["dO"] + d, 88), (x["lse"] + 8, 112)):
        ax.plot([x_end, x_gap, x_gap], [mid, mid, -18], color="C0", linewidth=1.5)
    # the key block: out of K and V, up, into the K, V tile
    kv_path = [(x["V"] + d, top + mid), (220, top + mid), (220, -27)]
    _route(ax, [*kv_path, (360 + d / 2, -27), (360 + d / 2, 20)], "C1")
    k_path = ([x["K"] + d, 176, 176, 220], [top + mid, top + mid, -27, -27])
    ax.plot(*k_path, color="C1", linewidth=1.5)
    # dK and dV: from the accumulators, down under the columns, up into their block
    down = [(400 + d / 2, 20 + block), (400 + d / 2, L + 3), (271, L + 3)]
    _route(ax, [*down, (271, top + mid), (x["dK"] + d, top + mid)], "C2")
    _route(ax, [(321, L + 3), (321, top + mid), (x["dV"] + d, top + mid)], "C2")
    _key(ax, 345, "each query block of Q, dO, lse, δ: read in turn",
         "its key block of K and V: read once",
         "its rows of dK and dV: written once, at the end")  # fmt: skip
    ax.set_title(
        f"One program of _backward_keys (no mask): key block {key_block} "
        f"(counting from 0) of {L // block}, blocks of {block} rows",
        fontsize=10,
    )
    return fig
