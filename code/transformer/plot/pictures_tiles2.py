"""A picture of one step of tiled attention: what is alive at that moment.

:func:`tile_step` draws the ``(L, S)`` grid of scores cut into tiles, with the
query block that is being computed, the key block it has reached, the one
tile of scores that exists at that moment, and the running quantities ``m``,
``ℓ`` and ``acc`` that the query block keeps between key blocks.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

DONE_COLOR = "#c6dbef"
"""Tiles of the query block already folded into ``m``, ``ℓ`` and ``acc``."""

TILE_COLOR = "#dd6b20"
"""The one tile of scores alive at this step."""

BLOCK_COLOR = "#2b6cb0"
"""The query block and the key and value blocks in use."""

RUNNING_COLOR = "#38a169"
"""The running quantities ``m``, ``ℓ`` and ``acc``."""


def _box(ax: Axes, x: float, y: float, w: float, h: float, label: str, **kw) -> None:
    """Add a rectangle with a ``label`` (for tests and the legend) to ``ax``."""
    ax.add_patch(Rectangle((x, y), w, h, label=label, **kw))


def tile_step(
    L: int,
    S: int,
    block_size: int,
    *,
    query_block: int,
    key_block: int,
    d_k: int,
    d_v: int | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw one step of ``tiled_attention``: a query block meets a key block.

    The middle of the picture is the ``(L, S)`` grid of scores, queries down
    and keys across, cut into square tiles of ``block_size``. In the row of
    the current query block, the tiles left of the current key block are done
    (shaded: their work lives on only in ``m``, ``ℓ`` and ``acc``), the
    current tile is the one tile of scores that exists, and the tiles to its
    right are still to come (outlined). Left of the grid is the query block,
    ``bq × d_k``; above it the key block and the value block, drawn
    ``bk`` wide; right of it the running maximum ``m``, the running sum
    ``ℓ`` (one number per query each, drawn wider than one column so that
    they show) and the accumulator ``acc``, ``bq × d_v``.

    Args:
        L: Number of queries.
        S: Number of keys.
        block_size: Rows of queries and of keys per tile.
        query_block: Index of the current query block, from 0.
        key_block: Index of the current key block, from 0.
        d_k: Width of a query and a key.
        d_v: Width of a value; ``d_k`` when ``None``.
        ax: Axes to draw on; a new figure is made when ``None``.

    Returns:
        The axes drawn on. Every box is a ``Rectangle`` whose label names it:
        ``"Q block"``, ``"K block"``, ``"V block"``, ``"score tile"``,
        ``"done"``, ``"to come"``, ``"m"``, ``"ℓ"``, ``"acc"``.

    Raises:
        ValueError: If a size is not positive or a block index is out of range.
    """
    d_v = d_k if d_v is None else d_v
    if min(L, S, block_size, d_k, d_v) < 1:
        raise ValueError(
            f"sizes must be positive, got L={L}, S={S}, block_size={block_size}, "
            f"d_k={d_k}, d_v={d_v}"
        )
    rows, cols = math.ceil(L / block_size), math.ceil(S / block_size)
    if not (0 <= query_block < rows and 0 <= key_block < cols):
        raise ValueError(
            f"blocks must lie in the {rows} x {cols} grid, got "
            f"query_block={query_block}, key_block={key_block}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.6))
    q0, k0 = query_block * block_size, key_block * block_size
    bq, bk = min(block_size, L - q0), min(block_size, S - k0)
    gap, thin = 0.06 * max(L, S), 0.12 * max(L, S)
    grey = {"facecolor": "white", "edgecolor": "0.75", "linewidth": 0.8}
    for i in range(rows):
        for j in range(cols):
            y, x = i * block_size, j * block_size
            h, w = min(block_size, L - y), min(block_size, S - x)
            if i != query_block:
                ax.add_patch(Rectangle((x, y), w, h, **grey))
            elif j < key_block:
                _box(ax, x, y, w, h, "done", facecolor=DONE_COLOR, edgecolor="0.4")
            elif j == key_block:
                _box(ax, x, y, w, h, "score tile", facecolor=TILE_COLOR,
                     edgecolor="black")  # fmt: skip
                ax.text(x + w / 2, y + h / 2, f"scores\n{bq} × {bk}", ha="center",
                        va="center", color="white", fontsize=9)  # fmt: skip
            else:
                _box(ax, x, y, w, h, "to come", facecolor="white", edgecolor="0.4",
                     linestyle="--")  # fmt: skip
    blue = {"facecolor": BLOCK_COLOR, "edgecolor": "black", "alpha": 0.85}
    _box(ax, -gap - d_k, q0, d_k, bq, "Q block", **blue)
    ax.text(-gap - d_k / 2, q0 + bq / 2, f"Q\n{bq} × {d_k}", ha="center",
            va="center", color="white", fontsize=9)  # fmt: skip
    for name, depth, top in (("K", d_k, -gap - d_k), ("V", d_v, -2 * gap - d_k - d_v)):
        _box(ax, k0, top, bk, depth, f"{name} block", **blue)
        ax.text(k0 + bk / 2, top + depth / 2, f"{name}\n{bk} × {depth}",
                ha="center", va="center", color="white", fontsize=9)  # fmt: skip
    green = {"facecolor": RUNNING_COLOR, "edgecolor": "black", "alpha": 0.85}
    x = S + gap
    for name, width in (("m", thin), ("ℓ", thin), ("acc", d_v)):
        _box(ax, x, q0, width, bq, name, **green)
        shape = f"{bq} × {d_v}" if name == "acc" else f"{bq}"
        ax.text(x + width / 2, q0 + bq / 2, f"{name}\n{shape}", ha="center",
                va="center", color="white", fontsize=9)  # fmt: skip
        x += width + gap / 2
    ax.set_xlim(-2 * gap - d_k, x + gap / 2)
    ax.set_ylim(L + gap / 2, -3 * gap - d_k - d_v)
    ax.set_aspect("equal")
    ax.set_xticks([j * block_size for j in range(cols)] + [S])
    ax.set_yticks([i * block_size for i in range(rows)] + [L])
    ax.tick_params(labelsize=8)
    for spine in ax.spines.values():
        spine.set_visible(False)
    keys = {"done": DONE_COLOR, "to come": "white"}
    handles = [Patch(facecolor=c, edgecolor="0.4", label=f"this row's tiles {n}")
               for n, c in keys.items()]  # fmt: skip
    handles[1].set_linestyle("--")
    ax.legend(handles=handles, loc="upper right", fontsize=8, frameon=False)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(
        f"One step: query block {query_block} meets key block {key_block}",
        fontsize=10,
    )
    return ax
