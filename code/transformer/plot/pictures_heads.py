"""Two pictures drawn from real modules: where a head's queries come from, and
how one sine-cosine pair of the positional encoding turns with the position.

:func:`head_columns_figure` colours the columns of a
:class:`~transformer.parts.multihead.MultiHeadAttention`'s ``W_Q`` by the head
they feed, next to the queries they make and the per-head queries that
:func:`~transformer.parts.multihead.split_heads` cuts out of them.
:func:`sinusoid_circle_figure` draws a pair of columns of a
:class:`~transformer.parts.positional.SinusoidalPositionalEncoding` as a point
on the unit circle, one dot per position.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from ..parts.multihead import MultiHeadAttention, split_heads
from ..parts.positional import SinusoidalPositionalEncoding

RED = "#c0392b"

HEAD_CMAPS = ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys")
"""One sequential colour map per head: the colour says which head;
the shade says the value."""


def _head_blocks(
    ax: Axes, values: np.ndarray, d_k: int, limit: float, first_head: int = 0
) -> None:
    """Draw ``values``, columns ``i * d_k`` to ``(i + 1) * d_k`` in head i's colours.

    Every head shares one scale, from ``-limit`` (lightest) to ``limit``
    (darkest).
    """
    rows, cols = values.shape
    for block in range(cols // d_k):
        shown = np.full(values.shape, np.nan)
        columns = slice(block * d_k, (block + 1) * d_k)
        shown[:, columns] = values[:, columns]
        cmap = HEAD_CMAPS[(first_head + block) % len(HEAD_CMAPS)]
        ax.imshow(
            np.ma.masked_invalid(shown),
            cmap=cmap,
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
        )
    for cut in range(d_k, cols, d_k):
        ax.axvline(cut - 0.5, color="black", lw=1.5)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(labelsize=7)


def head_columns_figure(mha: MultiHeadAttention, x: torch.Tensor) -> Figure:
    """Draw ``W_Q`` with its columns coloured by head, the queries, and each head's cut.

    Left: the paper's ``W_Q``, the transpose of ``mha.w_q.weight``, one row
    per input dimension and one column per output dimension; the block of
    ``d_k`` columns that head ``i`` reads is drawn in head ``i``'s colours.
    Middle: the queries ``x W_Q`` (plus the bias, if any) of one sequence,
    coloured the same way. Right: one small panel per head, its queries as
    :func:`~transformer.parts.multihead.split_heads` cuts them out.

    Args:
        mha: The module whose query projection is drawn.
        x: One sequence.

    Returns:
        The figure: two wide axes, then ``h`` small ones, in that order.

    Shape:
        - x: ``(L, d_model)``
    """
    h, d_k = mha.h, mha.d_k
    with torch.no_grad():
        # (d_model, d_model)
        w_q = mha.w_q.weight.detach().T.cpu()
        # (L, d_model)
        q = mha.w_q(x[None])[0].detach().cpu()
        # (h, L, d_k)
        per_head = split_heads(q[None], h)[0]
    L, d_model = q.shape
    fig = plt.figure(figsize=(11, 4.2))
    grid = fig.add_gridspec(
        h, 3, width_ratios=[d_model, d_model, 1.6 * d_k], wspace=0.3, hspace=0.6
    )
    ax_w = fig.add_subplot(grid[:, 0])
    _head_blocks(ax_w, w_q.numpy(), d_k, float(w_q.abs().max()))
    ax_w.set(
        xlabel="column of W_Q (query dimension)",
        ylabel="row of W_Q (input dimension)",
    )
    ax_w.set_title(f"W_Q, (d_model, d_model) = ({d_model}, {d_model})", pad=16)
    ax_q = fig.add_subplot(grid[:, 1])
    q_limit = float(q.abs().max())
    _head_blocks(ax_q, q.numpy(), d_k, q_limit)
    ax_q.set(
        xlabel="query dimension",
        ylabel="position",
    )
    product = "x W_Q" if mha.w_q.bias is None else "x W_Q + b"
    ax_q.set_title(f"queries {product}, (L, d_model) = ({L}, {d_model})", pad=16)
    for ax in (ax_w, ax_q):
        for head in range(h):
            ax.text(
                head * d_k + (d_k - 1) / 2,
                1.01,
                f"head {head}",
                transform=ax.get_xaxis_transform(),
                ha="center",
                va="bottom",
                fontsize=8,
            )
    for head in range(h):
        ax = fig.add_subplot(grid[head, 2])
        _head_blocks(ax, per_head[head].numpy(), d_k, q_limit, first_head=head)
        ax.set_xticks(range(d_k), [str(head * d_k + c) for c in range(d_k)])
        first = head * d_k
        ax.set_title(
            f"head {head} = columns {first}-{first + d_k - 1}: (L, d_k) = ({L}, {d_k})",
            fontsize=9,
        )
    fig.suptitle(
        "A head is a block of columns: head i's queries use only its own columns\n"
        "(colour: which head; shade: the value, light negative, dark positive)",
        fontsize=10,
    )
    fig.subplots_adjust(left=0.06, right=0.99, top=0.8, bottom=0.13)
    return fig


def _pair_panel(
    ax: Axes,
    encoding: SinusoidalPositionalEncoding,
    pair: int,
    n_positions: int,
    k: int,
    starts: Sequence[int],
) -> None:
    """Draw pair ``pair`` of the first ``n_positions`` rows as points on the circle."""
    # (n_positions,) each: the sine and the cosine of omega_i * pos
    sines = encoding.pe[:n_positions, 2 * pair].cpu().numpy()
    cosines = encoding.pe[:n_positions, 2 * pair + 1].cpu().numpy()
    omega = 10000.0 ** (-2 * pair / encoding.d_model)
    turn = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.sin(turn), np.cos(turn), color="#cccccc", lw=1, zorder=0)
    positions = np.arange(n_positions)
    ax.scatter(sines, cosines, c=positions, cmap="viridis", s=30, zorder=2)
    for pos in positions:
        ax.annotate(
            str(pos),
            (sines[pos], cosines[pos]),
            xytext=(1.17 * sines[pos], 1.17 * cosines[pos]),
            ha="center",
            va="center",
            fontsize=7,
        )
    for n, start in enumerate(starts):
        # an arc inside the circle, from the angle of `start` to that of `start + k`
        angle = np.linspace(omega * start, omega * (start + k), 100)
        radius = 0.8 - 0.2 * n
        ax.plot(
            radius * np.sin(angle[:-1]), radius * np.cos(angle[:-1]), color=RED, lw=1.5
        )
        ax.add_patch(
            FancyArrowPatch(
                (radius * np.sin(angle[-3]), radius * np.cos(angle[-3])),
                (radius * np.sin(angle[-1]), radius * np.cos(angle[-1])),
                arrowstyle="-|>",
                mutation_scale=12,
                color=RED,
                lw=1.5,
            )
        )
        for pos in (start, start + k):
            ax.plot(
                [radius * sines[pos], sines[pos]],
                [radius * cosines[pos], cosines[pos]],
                color=RED,
                lw=0.6,
                ls=":",
            )
    ax.set_aspect("equal")
    ax.set_xlim(-1.35, 1.35)
    ax.set_ylim(-1.35, 1.35)
    ax.axhline(0, color="#eeeeee", lw=0.8, zorder=0)
    ax.axvline(0, color="#eeeeee", lw=0.8, zorder=0)
    ax.set(
        xlabel=f"dimension {2 * pair}: sin(ω·pos)",
        ylabel=f"dimension {2 * pair + 1}: cos(ω·pos)",
        title=f"pair {pair}: ω = {omega:.3g} rad per position",
    )


def sinusoid_circle_figure(
    encoding: SinusoidalPositionalEncoding,
    *,
    pairs: Sequence[int] = (0, 1),
    n_positions: int = 20,
    k: int = 3,
    starts: Sequence[int] = (2, 12),
) -> Figure:
    """Draw sine-cosine pairs of the encoding as points going round the unit circle.

    One panel per pair ``i``: the dot for position ``pos`` sits at
    ``(PE[pos, 2i], PE[pos, 2i + 1]) = (sin(ω_i pos), cos(ω_i pos))``,
    coloured and labelled by ``pos``. A red arrow goes from each position in
    ``starts`` to ``k`` positions later: every arrow of a panel turns by the
    same angle ``ω_i k``, wherever it starts (the angle is computed from
    ``ω_i``; the dots are read from the table).

    Args:
        encoding: The encoding whose table is drawn.
        pairs: Which pairs to draw, one panel each.
        n_positions: How many positions, from 0, to draw.
        k: The offset the arrows show.
        starts: Where the arrows start; each ``start + k < n_positions``.

    Returns:
        The figure, one axes per pair.

    Raises:
        ValueError: If a pair, a position or an arrow is outside the table.
    """
    if n_positions > encoding.max_len or any(
        not 0 <= s or s + k >= n_positions for s in starts
    ):
        raise ValueError(
            f"n_positions must be at most max_len = {encoding.max_len} and every "
            f"start + k below n_positions = {n_positions}, got starts={list(starts)}, "
            f"k={k}"
        )
    if any(not 0 <= p < encoding.d_model // 2 for p in pairs):
        raise ValueError(
            f"pairs must lie in [0, {encoding.d_model // 2}), got {list(pairs)}"
        )
    fig, axes = plt.subplots(1, len(pairs), figsize=(4.6 * len(pairs), 4.6))
    axes = np.atleast_1d(axes)
    for ax, pair in zip(axes, pairs):
        _pair_panel(ax, encoding, pair, n_positions, k, starts)
    fig.suptitle(
        f"Each pair is a point on a circle; moving {k} positions turns it "
        f"by the same angle"
    )
    fig.tight_layout()
    return fig
