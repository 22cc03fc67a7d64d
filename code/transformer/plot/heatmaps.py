"""Heatmaps: attention weights, masks and any matrix, in perceptually uniform colours.

Attention weights use viridis on a fixed 0-to-1 scale; other matrices use
cividis, centred on zero when their sign matters. Both maps are perceptually
uniform, stay readable for colour-blind readers, and sit on an opaque white
background that keeps them readable in the site's dark mode.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from .style import MASK_COLORS, _as_matrix, _cells, _draw_matrix


def attention_heatmap(
    weights: torch.Tensor,
    *,
    ax: Axes | None = None,
    title: str = "Attention weights",
    xlabel: str = "key position (S)",
    ylabel: str = "query position (L)",
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    annotate: bool | None = None,
    colorbar: bool = True,
) -> Axes:
    """Draw attention weights as a heatmap: row ``i`` is what query ``i`` looks at.

    Args:
        weights: Attention weights. Leading dimensions of size one are dropped.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the key axis.
        ylabel: Label of the query axis.
        xticklabels: Names of the keys, e.g. tokens.
        yticklabels: Names of the queries.
        annotate: Write each weight in its cell. Defaults to ``True`` for
            matrices of at most 8 × 8.
        colorbar: Add a colour bar from 0 to 1.

    Returns:
        The axes drawn on.

    Shape:
        weights: ``(L, S)``, or ``(1, ..., 1, L, S)``.

    Raises:
        TypeError: If ``weights`` is not a tensor.
        ValueError: If ``weights`` is not a matrix.
    """
    matrix = _as_matrix("weights", weights).float()
    ax, image = _draw_matrix(
        matrix,
        ax,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        xticklabels=xticklabels,
        yticklabels=yticklabels,
        vmin=0.0,
        vmax=1.0,
        cmap="viridis",
    )
    if annotate is None:
        annotate = max(matrix.shape) <= 8
    if annotate:
        for (i, j), w in _cells(matrix):
            ax.text(
                j,
                i,
                f"{w:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if w > 0.6 else "white",
            )
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="weight")
    return ax


def mask_heatmap(
    mask: torch.Tensor,
    *,
    ax: Axes | None = None,
    title: str = "Mask: which keys each query may attend to",
    xlabel: str = "key position (S)",
    ylabel: str = "query position (L)",
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    legend: bool = True,
) -> Axes:
    """Draw a boolean mask: blue cells may be attended to, grey cells are blocked.

    Args:
        mask: Boolean mask, ``True`` = may attend. Leading dimensions of size
            one are dropped.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the key axis.
        ylabel: Label of the query axis.
        xticklabels: Names of the keys.
        yticklabels: Names of the queries.
        legend: Add a legend naming the two colours.

    Returns:
        The axes drawn on.

    Shape:
        mask: ``(L, S)``, or ``(1, ..., 1, L, S)``.

    Raises:
        TypeError: If ``mask`` is not a boolean tensor.
        ValueError: If ``mask`` is not a matrix.
    """
    matrix = _as_matrix("mask", mask)
    if matrix.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor, got dtype {matrix.dtype}")
    ax, _ = _draw_matrix(
        matrix.int(),
        ax,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        xticklabels=xticklabels,
        yticklabels=yticklabels,
        cmap=ListedColormap(MASK_COLORS),
        vmin=0,
        vmax=1,
    )
    if legend:
        handles = [
            Patch(color=MASK_COLORS[1], label="True: may attend"),
            Patch(color=MASK_COLORS[0], label="False: blocked"),
        ]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def attention_grid(
    weights: torch.Tensor | Sequence[torch.Tensor],
    *,
    titles: Sequence[str] | None = None,
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    suptitle: str = "",
    ncols: int = 4,
    xlabel: str = "key position (S)",
    ylabel: str = "query position (L)",
    colorbar_label: str | None = None,
) -> plt.Figure:
    """Draw several attention matrices side by side, e.g. one per head.

    Args:
        weights: The matrices: a ``(n, L, S)`` tensor such as one sequence's
            ``(h, L, S)`` weights, or a list of ``(L, S)`` matrices.
        titles: One title per matrix; ``"head 0"``, ``"head 1"``, ... when ``None``.
        xticklabels: Names of the keys, shared by every panel.
        yticklabels: Names of the queries, shared by every panel.
        suptitle: Title of the whole figure: what to look for.
        ncols: Panels per row.
        xlabel: Label of the key axes (bottom row only).
        ylabel: Label of the query axes (left column only).
        colorbar_label: If given, one colour bar for every panel (they share
            the 0 to 1 scale of attention weights), with this label.

    Returns:
        The figure.

    Raises:
        ValueError: If ``weights`` is empty or ``titles`` has the wrong length.
    """
    matrices = list(weights)
    if not matrices:
        raise ValueError("weights must hold at least one matrix, got none")
    titles = (
        list(titles)
        if titles is not None
        else [f"head {i}" for i in range(len(matrices))]
    )
    if len(titles) != len(matrices):
        raise ValueError(
            f"titles must have one entry per matrix ({len(matrices)}), "
            f"got {len(titles)}"
        )
    ncols = min(ncols, len(matrices))
    nrows = -(-len(matrices) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(2.9 * ncols, 2.8 * nrows + 0.5), squeeze=False
    )
    for k, ax in enumerate(axes.flat):
        if k >= len(matrices):
            ax.axis("off")
            continue
        attention_heatmap(
            matrices[k],
            ax=ax,
            title=titles[k],
            colorbar=False,
            annotate=False,
            xticklabels=xticklabels,
            yticklabels=yticklabels,
            xlabel=xlabel if k // ncols == nrows - 1 else "",
            ylabel=ylabel if k % ncols == 0 else "",
        )
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    if colorbar_label is not None:
        panels = list(axes.flat)[: len(matrices)]
        fig.colorbar(
            panels[0].images[0], ax=panels, label=colorbar_label, fraction=0.05
        )
    return fig


def matrix_heatmap(
    matrix: torch.Tensor,
    *,
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "column",
    ylabel: str = "row",
    colorbar_label: str = "value",
    centered: bool = True,
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    annotate: bool | float = False,
    aspect: str = "equal",
) -> Axes:
    """Draw any real matrix as a heatmap, e.g. a positional-encoding or weight matrix.

    Unlike :func:`attention_heatmap`, whose colours run from 0 to 1, the
    colour scale follows the data.

    Args:
        matrix: The matrix. Leading dimensions of size one are dropped.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the column axis.
        ylabel: Label of the row axis.
        colorbar_label: What the colours mean.
        centered: Use a colour scale symmetric about zero, so that zero is
            the middle colour and the sign is visible (dark blue below,
            yellow above, in cividis); otherwise cividis
            from the minimum to the maximum.
        xticklabels: Names of the columns.
        yticklabels: Names of the rows.
        annotate: Write each value in its cell (for small matrices), in
            white on dark cells and black on light ones; a number gives the
            font size (``True``: 7).
        aspect: ``"equal"`` for square cells, ``"auto"`` to fill the axes,
            e.g. for a long, narrow table.

    Returns:
        The axes drawn on.

    Shape:
        matrix: ``(rows, cols)``, or ``(1, ..., 1, rows, cols)``.

    Raises:
        TypeError: If ``matrix`` is not a tensor.
        ValueError: If ``matrix`` is not a matrix.
    """
    values = _as_matrix("matrix", matrix).float()
    limit = float(values.abs().max()) or 1.0
    scale = dict(vmin=-limit, vmax=limit) if centered else {}
    ax, image = _draw_matrix(
        values,
        ax,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        xticklabels=xticklabels,
        yticklabels=yticklabels,
        aspect=aspect,
        cmap="cividis",
        **scale,
    )
    if annotate:
        size = 7 if annotate is True else annotate
        for (i, j), v in _cells(values):
            red, green, blue, _ = image.cmap(image.norm(v))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=size,
                    color="white" if dark else "black")  # fmt: skip
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=colorbar_label)
    return ax
