"""A picture of one update of the online softmax, for one query row.

:func:`online_softmax_figure` takes one query's scores, cut into two tiles,
and draws what the online softmax does when the second tile arrives: the
running maximum before and after, the factor ``exp(m_old - m_new)`` that
rescales what was summed so far, and the running sum before and after.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .part_two import PALETTE

OLD_COLOR, NEW_COLOR = PALETTE[0], PALETTE[1]
"""The tile already seen (and the running sum after it); the tile that arrives."""


def online_softmax_figure(scores: torch.Tensor, block: int) -> Figure:
    """Draw one online-softmax update: a second tile of scores arrives.

    ``scores`` holds one query's scores for ``2 * block`` keys: the first
    tile, ``scores[:block]``, has been seen, and the second,
    ``scores[block:]``, arrives. With ``m_old`` the largest score of the
    first tile and ``m_new`` the largest of both, the running sum before the
    update is ``ℓ_old = Σ exp(s - m_old)`` over the first tile; the update
    multiplies it by ``exp(m_old - m_new)`` and adds the second tile's
    ``Σ exp(s - m_new)``, which gives ``ℓ_new``, the softmax's denominator
    ``Σ exp(s - m_new)`` over all the keys.

    The left panel draws the scores as bars, one colour per tile, with
    dashed lines at ``m_old`` and ``m_new``. The right panel draws four
    bars: ``ℓ_old``, ``ℓ_old`` rescaled, the new tile's share, and
    ``ℓ_new``, which stacks the two before it, each with its value above it
    to three decimals; its title gives the factor.

    Args:
        scores: One query's scores, shape ``(2 * block,)``, all finite.
        block: Keys per tile, at least 1.

    Returns:
        The figure, with two axes. The left one holds ``2 * block`` bars and
        the texts ``"m_old = …"`` and ``"m_new = …"``; the right one holds
        five bars (``ℓ_new`` is two stacked bars), the four values as texts
        in the order above, and the title ``"exp(m_old − m_new) = …"``.

    Raises:
        ValueError: If ``block`` is below 1, or ``scores`` is not a finite
            vector of ``2 * block`` numbers.
    """
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    if scores.dim() != 1 or scores.numel() != 2 * block:
        raise ValueError(
            f"scores must be a vector of 2 * block = {2 * block} numbers, "
            f"got shape {tuple(scores.shape)}"
        )
    s = scores.detach().double().cpu()
    if not torch.isfinite(s).all():
        raise ValueError("scores must be finite")
    old, new = s[:block], s[block:]
    m_old, m_new = old.max().item(), s.max().item()
    rescale = math.exp(m_old - m_new)
    sum_old = torch.exp(old - m_old).sum().item()
    share = torch.exp(new - m_new).sum().item()
    sum_new = sum_old * rescale + share

    fig, (left, right) = plt.subplots(
        1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1.2, 1]}
    )
    keys = range(2 * block)
    colours = [OLD_COLOR] * block + [NEW_COLOR] * block
    left.bar(keys, s.tolist(), color=colours, edgecolor="black", linewidth=0.6)
    left.axhline(0, color="0.5", linewidth=0.8)
    for value, name, colour in ((m_old, "m_old", OLD_COLOR), (m_new, "m_new", "black")):
        left.axhline(value, color=colour, linestyle="--", linewidth=1.2)
        left.text(
            -0.4,
            value,
            f"{name} = {value:.3f}",
            ha="left",
            va="bottom",
            fontsize=9,
            color=colour,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )
    left.axvline(block - 0.5, color="0.4", linestyle=":", linewidth=1)
    left.set_xticks(list(keys))
    left.set_xlabel(f"key (tile 1: keys 0-{block - 1}, tile 2: keys {block}-"
                    f"{2 * block - 1})")  # fmt: skip
    left.set_ylabel("score s")
    left.set_title("One query's scores: tile 1 seen, tile 2 arrives", fontsize=10)
    low, high = min(s.min().item(), 0.0), max(m_new, 0.0)
    left.set_ylim(low - 0.1 * (high - low + 1), high + 0.2 * (high - low + 1))

    labels = ["ℓ_old", "ℓ_old\nrescaled", "tile 2's\nshare", "ℓ_new"]
    right.bar(0, sum_old, color=OLD_COLOR, edgecolor="black")
    right.bar(1, sum_old * rescale, color=OLD_COLOR, edgecolor="black", hatch="//")
    right.bar(2, share, color=NEW_COLOR, edgecolor="black")
    right.bar(3, sum_old * rescale, color=OLD_COLOR, edgecolor="black", hatch="//")
    right.bar(3, share, bottom=sum_old * rescale, color=NEW_COLOR, edgecolor="black")
    values = [sum_old, sum_old * rescale, share, sum_new]
    for x, value in enumerate(values):
        right.text(x, value, f"{value:.3f}", ha="center", va="bottom", fontsize=9)
    right.set_xticks(range(4), labels, fontsize=8)
    handles = [
        Patch(facecolor=colour, edgecolor="black", label=f"from tile {tile}")
        for tile, colour in ((1, OLD_COLOR), (2, NEW_COLOR))
    ]
    right.legend(handles=handles, loc="upper center", ncol=2, fontsize=8, frameon=False)
    right.set_ylabel("running sum ℓ")
    right.set_ylim(0, 1.3 * max(values))
    right.set_title(f"exp(m_old − m_new) = {rescale:.3f}", fontsize=10)
    fig.suptitle("One online-softmax update for one query", fontsize=11)
    fig.tight_layout()
    return fig
