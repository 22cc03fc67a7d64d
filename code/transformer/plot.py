"""Figures for the book: one consistent, readable style for every chapter.

Plotting lives here and never in the model modules. Every helper takes an
optional ``ax`` so figures can be combined, and returns the ``Axes`` it drew
on. Figures have an opaque white background so they stay readable in the
site's dark mode.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from ._checks import check_tensor

BOOK_STYLE: dict[str, object] = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "figure.dpi": 100,
    "figure.figsize": (5.0, 3.6),
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": False,
    "font.size": 10,
    "image.cmap": "viridis",
    "legend.frameon": False,
}
"""Matplotlib settings shared by every figure in the book."""

MASK_COLORS = ("#d9d9d9", "#2b6cb0")
"""Colours of blocked (``False``) and allowed (``True``) mask cells."""


def use_book_style() -> None:
    """Apply :data:`BOOK_STYLE` to matplotlib's global settings."""
    mpl.rcParams.update(BOOK_STYLE)


def _as_matrix(name: str, x: torch.Tensor) -> torch.Tensor:
    check_tensor(name, x, expected="(L, S)")
    x = x.detach().cpu()
    while x.dim() > 2 and x.shape[0] == 1:
        x = x[0]
    if x.dim() != 2:
        raise ValueError(
            f"{name} must be a matrix (L, S) after dropping leading size-1 dimensions, "
            f"got shape {tuple(x.shape)}"
        )
    return x


def _label_axes(
    ax: Axes,
    matrix: torch.Tensor,
    xticklabels: Sequence[str] | None,
    yticklabels: Sequence[str] | None,
) -> None:
    rows, cols = matrix.shape
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    if xticklabels is not None:
        ax.set_xticklabels(list(xticklabels), rotation=90)
    if yticklabels is not None:
        ax.set_yticklabels(list(yticklabels))
    if cols > 24:
        ax.set_xticks(range(0, cols, max(1, cols // 8)))
    if rows > 24:
        ax.set_yticks(range(0, rows, max(1, rows // 8)))


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
    if ax is None:
        _, ax = plt.subplots()
    image = ax.imshow(matrix.numpy(), vmin=0.0, vmax=1.0, cmap="viridis")
    _label_axes(ax, matrix, xticklabels, yticklabels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if annotate is None:
        annotate = max(matrix.shape) <= 8
    if annotate:
        for (i, j), w in _cells(matrix):
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=8,
                    color="black" if w > 0.6 else "white")
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
    if ax is None:
        _, ax = plt.subplots()
    ax.imshow(matrix.int().numpy(), cmap=ListedColormap(MASK_COLORS), vmin=0, vmax=1)
    _label_axes(ax, matrix, xticklabels, yticklabels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend:
        handles = [Patch(color=MASK_COLORS[1], label="True: may attend"),
                   Patch(color=MASK_COLORS[0], label="False: blocked")]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def _cells(matrix: torch.Tensor):
    rows, cols = matrix.shape
    for i in range(rows):
        for j in range(cols):
            yield (i, j), float(matrix[i, j])
