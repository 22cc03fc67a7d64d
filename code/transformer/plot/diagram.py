"""The architecture diagram of the encoder-decoder Transformer, drawn by matplotlib."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ARCHITECTURE_COLORS = {
    "embedding": "#f4cfe0",
    "positional": "#e6e6e6",
    "attention": "#fbd8b0",
    "norm": "#fff1a8",
    "feed_forward": "#c9e2f5",
    "output": "#ddd5f0",
}
"""Fill colours of the kinds of block in :func:`architecture_diagram`."""

_BLOCK_W, _BLOCK_H = 4.0, 0.8
_SHAPE_STYLE = {"fontsize": 7.5, "family": "monospace", "color": "#1f4e79", "zorder": 3}


def _block(ax: Axes, x: float, y: float, text: str, kind: str, note: str) -> None:
    """Draw a rounded box at ``(x, y)``: a name and, smaller, the package's name."""
    ax.add_patch(
        FancyBboxPatch(
            (x - _BLOCK_W / 2, y - _BLOCK_H / 2),
            _BLOCK_W,
            _BLOCK_H,
            boxstyle="round,pad=0,rounding_size=0.12",
            fc=ARCHITECTURE_COLORS[kind],
            ec="#333333",
            lw=1.0,
            zorder=2,
        )
    )
    ax.text(x, y + 0.15, text, ha="center", va="center", fontsize=9, zorder=3)
    ax.text(
        x,
        y - 0.19,
        note,
        ha="center",
        va="center",
        fontsize=7.5,
        family="monospace",
        color="#444444",
        zorder=3,
    )


def _arrow(
    ax: Axes, points: Sequence[tuple[float, float]], color: str = "#333333"
) -> None:
    """Draw a polyline through ``points`` with an arrow head at the last one."""
    for k in range(len(points) - 1):
        head = "-|>" if k == len(points) - 2 else "-"
        ax.add_patch(
            FancyArrowPatch(
                points[k],
                points[k + 1],
                arrowstyle=head,
                mutation_scale=10,
                lw=1.1,
                color=color,
                shrinkA=0,
                shrinkB=0,
                zorder=1,
            )
        )


def architecture_diagram(
    *,
    ax: Axes | None = None,
    title: str = "The Transformer: follow the arrows from token ids to probabilities",
) -> Axes:
    """Draw the encoder-decoder Transformer as blocks, with the shapes between them.

    The encoder (left) and the decoder (right) each show one of their ``N``
    identical layers. Every block but the softmax names the package's module
    that computes it (the output layer by its attribute, ``out_proj``). The
    arrows into, out of and above the two layer boxes are labelled with the
    shape of the tensor they carry; the arrows inside a box, where the shape
    does not change, are not. Grey arrows are the residual connections, and
    the encoder's output (the memory) enters each decoder layer's
    cross-attention as its keys and values.

    Args:
        ax: Axes to draw on; a new 7.2 × 8.4 inch figure is made when ``None``.
        title: What the reader should look for.

    Returns:
        The axes drawn on (with its axis lines switched off).
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.2, 8.4))
        fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.96)
    ax.set(xlim=(0, 11.6), ylim=(-0.45, 14.5))
    ax.set_title(title, fontsize=10)
    ax.axis("off")
    w, h = _BLOCK_W, _BLOCK_H
    xe, xd = 2.75, 8.85  # centres of the encoder and decoder columns
    rows = [
        4.75 + 1.2 * i for i in range(6)
    ]  # heights of the sublayer rows in the stacks

    for x, side, ids, n, n_rows in [
        (xe, -1, "source token ids", "S", 4),
        (xd, +1, "target token ids, shifted right", "L", 6),
    ]:
        ax.text(x, -0.15, ids, ha="center", va="center", fontsize=9)
        _block(ax, x, 1.2, "Token embedding × √d_model", "embedding", "TokenEmbedding")
        _block(
            ax,
            x,
            2.7,
            "+ positional encoding",
            "positional",
            "SinusoidalPositionalEncoding",
        )
        for y0, y1, shape in [
            (0.05, 1.2 - h / 2, f"(B, {n})"),
            (1.2 + h / 2, 2.7 - h / 2, f"(B, {n}, d_model)"),
            (2.7 + h / 2, rows[0] - h / 2, f"(B, {n}, d_model)"),
        ]:
            _arrow(ax, [(x, y0), (x, y1)])
            ax.text(
                x + 0.12,
                min((y0 + y1) / 2, 3.33),
                shape,
                ha="left",
                va="center",
                **_SHAPE_STYLE,
            )
        top = rows[n_rows - 1] + h / 2
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2 - 0.55, 3.6),
                w + 1.1,
                top + 0.25 - 3.6,
                boxstyle="round,pad=0,rounding_size=0.2",
                fc="#f6f6f6",
                ec="#888888",
                lw=1.0,
                ls="--",
                zorder=0,
            )
        )
        ax.text(
            x - w / 2 - 0.5,
            top + 0.45,
            f"N × {'encoder' if side < 0 else 'decoder'} layer",
            ha="left",
            va="center",
            fontsize=9.5,
            fontweight="bold",
            color="#444444",
        )
        for row in range(n_rows - 1):
            _arrow(ax, [(x, rows[row] + h / 2), (x, rows[row + 1] - h / 2)])
        x_res = x + side * (w / 2 + 0.28)
        for row in range(0, n_rows, 2):  # around each sublayer into its Add & Norm
            y_tap = rows[row] - h / 2 - (0.35 if row == 0 else 0.2)
            _arrow(
                ax,
                [
                    (x, y_tap),
                    (x_res, y_tap),
                    (x_res, rows[row + 1]),
                    (x + side * w / 2, rows[row + 1]),
                ],
                color="#8a8a8a",
            )
        for row in range(1, n_rows, 2):
            _block(ax, x, rows[row], "Add & Norm", "norm", "AddNorm")
        _block(
            ax,
            x,
            rows[n_rows - 2],
            "Position-wise feed-forward",
            "feed_forward",
            "PositionwiseFeedForward",
        )

    _block(
        ax, xe, rows[0], "Multi-head self-attention", "attention", "MultiHeadAttention"
    )
    _block(
        ax,
        xd,
        rows[0],
        "Masked multi-head self-attention",
        "attention",
        "MultiHeadAttention (causal)",
    )
    _block(
        ax, xd, rows[2], "Multi-head cross-attention", "attention", "MultiHeadAttention"
    )

    # The memory: the encoder's output is the keys and values of every cross-attention.
    x_gap, y_mem = (
        xe + w / 2 + 0.7,
        rows[3] + h / 2 + 0.95,
    )  # just right of the encoder's box
    _arrow(
        ax,
        [
            (xe, rows[3] + h / 2),
            (xe, y_mem),
            (x_gap, y_mem),
            (x_gap, rows[2]),
            (xd - w / 2, rows[2]),
        ],
    )
    ax.text(
        (xe + x_gap) / 2,
        y_mem + 0.12,
        "memory (B, S, d_model)",
        ha="center",
        va="bottom",
        **_SHAPE_STYLE,
    )
    ax.text(x_gap + 0.1, rows[2] + 0.08, "K, V", ha="left", va="bottom", **_SHAPE_STYLE)

    _block(ax, xd, 12.35, "Linear: one score per word", "output", "out_proj")
    _block(ax, xd, 13.65, "Softmax", "output", "next-token probabilities")
    for y0, y1, shape in [
        (rows[5] + h / 2, 12.35 - h / 2, "(B, L, d_model)"),
        (12.35 + h / 2, 13.65 - h / 2, "(B, L, V) logits"),
    ]:
        _arrow(ax, [(xd, y0), (xd, y1)])
        ax.text(xd + 0.12, (y0 + y1) / 2, shape, ha="left", va="center", **_SHAPE_STYLE)
    return ax
