"""A picture of the output projection ``W^O`` of multi-head attention.

:func:`head_mixing_figure` draws the heads' outputs glued side by side, the
matrix ``W^O`` with its blocks of rows coloured by the head whose output they
read, the product, and each head's own contribution ``head_i W^O_i``: the
output is the sum of one part per head.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .pictures_heads import HEAD_CMAPS


def _blocks(
    ax: Axes, values: np.ndarray, d_k: int, limit: float, along_rows: bool
) -> None:
    """Draw ``values`` cut into blocks of ``d_k`` columns (or rows), block i in
    head i's colours, on one scale from ``-limit`` (light) to ``limit`` (dark)."""
    count = values.shape[0 if along_rows else 1]
    for block in range(count // d_k):
        shown = np.full(values.shape, np.nan)
        cut = slice(block * d_k, (block + 1) * d_k)
        if along_rows:
            shown[cut] = values[cut]
        else:
            shown[:, cut] = values[:, cut]
        ax.imshow(
            np.ma.masked_invalid(shown),
            cmap=HEAD_CMAPS[block % len(HEAD_CMAPS)],
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
        )
    line = ax.axhline if along_rows else ax.axvline
    for edge in range(d_k, count, d_k):
        line(edge - 0.5, color="black", lw=1.5)


def _plain(ax: Axes, values: np.ndarray, limit: float, head: int | None) -> None:
    """Draw ``values`` in one head's colours, or in red and blue if ``head`` is None."""
    cmap = "RdBu_r" if head is None else HEAD_CMAPS[head % len(HEAD_CMAPS)]
    ax.imshow(
        values,
        cmap=cmap,
        vmin=-limit,
        vmax=limit,
        aspect="auto",
        interpolation="nearest",
    )


def head_mixing_figure(concat: torch.Tensor, w_o: torch.Tensor, h: int) -> Figure:
    """Draw ``Concat(heads) W^O`` and the same output as a sum of one part per head.

    Top row: the heads' outputs glued side by side, head i's ``d_k`` columns
    in head i's colours; the paper's ``W^O``, its block of ``d_k`` rows that
    reads head i in head i's colours; and the output ``concat @ w_o``. Bottom
    row: each head's contribution ``head_i W^O_i``, in that head's colours.
    The three contributions add up to the output. All panels share one scale.

    Args:
        concat: The heads' outputs of one sequence, glued side by side.
        w_o: The paper's ``W^O``, the transpose of ``nn.Linear``'s weight.
        h: The number of heads.

    Returns:
        The figure: three axes on top (concat, ``W^O``, output), then one per
        head, in that order.

    Shape:
        - concat: ``(L, h * d_k)``
        - w_o: ``(h * d_k, d_model)``
    """
    concat = concat.detach().cpu().double()
    w_o = w_o.detach().cpu().double()
    L, width = concat.shape
    d_k, d_model = width // h, w_o.shape[1]
    output = concat @ w_o
    parts = [
        concat[:, i * d_k : (i + 1) * d_k] @ w_o[i * d_k : (i + 1) * d_k]
        for i in range(h)
    ]
    limit = float(
        max(t.abs().max() for t in [concat, w_o, output, *parts]).clamp_min(1e-12)
    )
    fig = plt.figure(figsize=(11, 6.4))
    grid = fig.add_gridspec(
        2, max(h, 3), height_ratios=[width, L + 2], hspace=0.55, wspace=0.3
    )
    ax_c = fig.add_subplot(grid[0, 0])
    _blocks(ax_c, concat.numpy(), d_k, limit, along_rows=False)
    ax_c.set_title(f"Concat(heads), (L, h·d_k) = ({L}, {width})", fontsize=9)
    ax_c.set(xlabel="column: head 0, then head 1, ...", ylabel="position")
    ax_w = fig.add_subplot(grid[0, 1])
    _blocks(ax_w, w_o.numpy(), d_k, limit, along_rows=True)
    ax_w.set_title(f"$W^O$, (h·d_k, d_model) = ({width}, {d_model})", fontsize=9)
    ax_w.set(xlabel="output dimension")
    ax_w.set_yticks(
        [i * d_k + (d_k - 1) / 2 for i in range(h)],
        [f"head {i}" for i in range(h)],
    )
    ax_o = fig.add_subplot(grid[0, 2])
    _plain(ax_o, output.numpy(), limit, head=None)
    ax_o.set_title(f"output = Concat · $W^O$, ({L}, {d_model})", fontsize=9)
    ax_o.set(xlabel="output dimension", ylabel="position")
    for i, part in enumerate(parts):
        ax = fig.add_subplot(grid[1, i])
        _plain(ax, part.numpy(), limit, head=i)
        sign = "" if i == 0 else "+ "
        ax.set_title(f"{sign}head {i} · $W^O_{i}$, ({L}, {d_model})", fontsize=9)
        ax.set(xlabel="output dimension")
        if i == 0:
            ax.set_ylabel("position")
    for ax in fig.axes:
        ax.tick_params(labelsize=7)
    fig.suptitle(
        "$W^O$ mixes the heads: the output is one part from each head, added\n"
        "(a head's parts in its colour, light negative, dark positive; the "
        "output in blue to red; one range for all)",
        fontsize=10,
    )
    fig.subplots_adjust(left=0.07, right=0.99, top=0.88, bottom=0.08)
    return fig
