"""One consistent, readable style for every figure, and the drawing of a matrix."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.image import AxesImage

from ..checks.tensors import check_tensor

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
    """Apply ``BOOK_STYLE`` to matplotlib's global settings."""
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


def _draw_matrix(
    values: torch.Tensor,
    ax: Axes | None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    xticklabels: Sequence[str] | None,
    yticklabels: Sequence[str] | None,
    **imshow: object,
) -> tuple[Axes, AxesImage]:
    """Draw ``values`` with ``imshow`` on ``ax`` (or a new figure), with labels."""
    if ax is None:
        _, ax = plt.subplots()
    image = ax.imshow(values.numpy(), **imshow)
    _label_axes(ax, values, xticklabels, yticklabels)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    return ax, image


def _cells(matrix: torch.Tensor):
    rows, cols = matrix.shape
    for i in range(rows):
        for j in range(cols):
            yield (i, j), float(matrix[i, j])
