"""Pictures for attention and masking: one soft lookup, one mask in four conventions.

:func:`soft_lookup_figure` follows one query through attention: its scores,
the softmax weights, and the output as the weighted mix of the value rows,
all computed with :func:`~transformer.parts.attention.scaled_dot_product_attention`.
:func:`mask_conventions_figure` writes one boolean mask as each common
convention writes it, so that the same cells can be read four ways.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from ..parts.attention import scaled_dot_product_attention
from .style import MASK_COLORS

CMAP = "RdBu_r"


def soft_lookup_figure(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    *,
    key_names: Sequence[str] | None = None,
    title: str = "",
) -> Figure:
    """Draw one query's scores, its softmax weights, and its output as a mix of values.

    Args:
        query: One query vector.
        keys: The keys it is compared with, one row per key.
        values: One value row per key.
        key_names: Names of the keys, for the axes; positions when ``None``.
        title: Title of the whole figure.

    Returns:
        A figure with three axes: the scaled scores as bars, the weights as
        bars, and a heatmap whose rows are ``weight_j * value_j`` followed by
        their sum, the output.

    Shape:
        - query: ``(d_k,)``
        - keys: ``(S, d_k)``
        - values: ``(S, d_v)``

    Raises:
        ValueError: If ``query`` is not a vector or ``key_names`` has the
            wrong length.
    """
    if query.dim() != 1:
        raise ValueError(f"query must be a vector (d_k,), got {tuple(query.shape)}")
    S = keys.shape[0]
    names = list(key_names) if key_names is not None else [str(j) for j in range(S)]
    if len(names) != S:
        raise ValueError(f"key_names must have {S} names, got {len(names)}")
    query, keys, values = (t.detach().float().cpu() for t in (query, keys, values))
    scores = keys @ query / math.sqrt(query.shape[0])
    output, weights = scaled_dot_product_attention(query[None], keys, values)
    weights, output = weights[0], output[0]
    fig, (ax_s, ax_w, ax_v) = plt.subplots(
        1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1, 1, 1.3]}
    )
    x = range(S)
    ax_s.bar(x, scores.tolist(), color="#7f7f7f")
    ax_s.axhline(0, color="black", lw=0.8)
    ax_s.set(xticks=list(x), title="1. scores q·k/√d_k", ylabel="score")
    ax_w.bar(x, weights.tolist(), color=MASK_COLORS[1])
    ax_w.set(xticks=list(x), ylim=(0, 1), title="2. softmax: weights (sum 1)")
    ax_w.set_ylabel("weight")
    for ax in (ax_s, ax_w):
        ax.set_xticklabels(names)
        ax.set_xlabel("key")
    for j, w in enumerate(weights.tolist()):
        ax_w.text(j, w + 0.02, f"{w:.2f}", ha="center", fontsize=8)
    mix = torch.cat([weights[:, None] * values, output[None]])
    limit = max(float(mix.abs().max()), 1e-6)
    ax_v.imshow(mix.numpy(), cmap=CMAP, vmin=-limit, vmax=limit)
    ax_v.axhline(S - 0.5, color="black", lw=2)
    row_names = [f"{w:.2f} × value '{n}'" for w, n in zip(weights.tolist(), names)]
    ax_v.set_yticks(range(S + 1), row_names + ["output = sum"])
    ax_v.set_xticks(range(values.shape[1]))
    ax_v.set(xlabel="value entry", title="3. output: weighted mix of value rows")
    for i, row in enumerate(mix.tolist()):
        for c, v in enumerate(row):
            dark = abs(v) > limit / 2
            ax_v.text(
                c,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


CONVENTIONS = (
    ("bool, True = may attend", "this package, F.sdpa"),
    ("bool, True = blocked", "nn.MultiheadAttention"),
    ("int, 1 = may attend", "masked_fill(mask == 0)"),
    ("float, added to scores", "0 = attend, -inf = blocked"),
)


def _entry(kind: int, allowed: bool) -> str:
    """Write one mask cell as convention ``kind`` (a CONVENTIONS index) writes it."""
    return [
        "T" if allowed else "F",
        "F" if allowed else "T",
        "1" if allowed else "0",
        "0" if allowed else "-inf",
    ][kind]


def mask_conventions_figure(mask: torch.Tensor) -> Figure:
    """Draw one boolean mask four times, each cell written in one convention.

    The colours are the same in all four panels (blue: may attend, grey:
    blocked); only what is written in the cells changes.

    Args:
        mask: Boolean mask, ``True`` = may attend.

    Returns:
        A figure with four axes, one per convention of ``CONVENTIONS``.

    Shape:
        mask: ``(L, S)``

    Raises:
        TypeError: If ``mask`` is not boolean.
        ValueError: If ``mask`` is not a matrix.
    """
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor, got dtype {mask.dtype}")
    if mask.dim() != 2:
        raise ValueError(f"mask must be (L, S), got {tuple(mask.shape)}")
    L, S = mask.shape
    fig, axes = plt.subplots(1, 4, figsize=(11, 3.3))
    for kind, (ax, (name, where)) in enumerate(zip(axes, CONVENTIONS)):
        ax.imshow(
            mask.int().cpu().numpy(), cmap=ListedColormap(MASK_COLORS), vmin=0, vmax=1
        )
        for i in range(L):
            for j in range(S):
                allowed = bool(mask[i, j])
                ax.text(
                    j,
                    i,
                    _entry(kind, allowed),
                    ha="center",
                    va="center",
                    color="white" if allowed else "black",
                    fontsize=9,
                )
        ax.set(title=f"{name}\n({where})", xticks=range(S), yticks=range(L))
        ax.set_xlabel("key")
        if kind == 0:
            ax.set_ylabel("query")
    fig.tight_layout()
    return fig
