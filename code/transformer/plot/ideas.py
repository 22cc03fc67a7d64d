"""Pictures of the ideas of attention, drawn from real tensors.

Two figures for the attention chapters: where one token's query, key and value
come from and what attention does with them, and how multi-head attention
cuts the model width into heads and puts them back together. Each function
computes what it draws with
:func:`~transformer.parts.attention.scaled_dot_product_attention`,
so a figure cannot show a different computation from the package's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..parts.attention import scaled_dot_product_attention

CMAP = "RdBu_r"


def _strip(
    ax: Axes, values: torch.Tensor, title: str, labels: Sequence[str] = ()
) -> None:
    """Draw a vector as a column of coloured cells with its numbers written in."""
    column = values.detach().reshape(-1, 1).numpy()
    limit = float(abs(column).max()) or 1.0
    ax.imshow(column, cmap=CMAP, vmin=-limit, vmax=limit, aspect="auto")
    for row, value in enumerate(column[:, 0]):
        colour = "white" if abs(value) > 0.6 * limit else "black"
        ax.text(
            0, row, f"{value:.2f}", ha="center", va="center", fontsize=8, color=colour
        )
    ax.set_xticks([])
    ax.set_yticks(range(len(labels)) if labels else [])
    if labels:
        ax.set_yticklabels(labels)
    ax.set_title(title, fontsize=9)


def _write(
    ax: Axes, grid: np.ndarray, *, dark: Callable[[float], bool], fontsize: float
) -> None:
    """Write every value of ``grid`` in its cell, white where ``dark(value)``."""
    for (row, col), value in np.ndenumerate(grid):
        colour = "white" if dark(value) else "black"
        ax.text(
            col, row, f"{value:.2f}", ha="center", va="center", fontsize=fontsize,
            color=colour,
        )  # fmt: skip


def _columns(ax: Axes, values: torch.Tensor, title: str, labels: Sequence[str]) -> None:
    """Draw the rows of ``values`` side by side as labelled columns, numbers in."""
    grid = values.detach().T.numpy()
    limit = float(abs(grid).max()) or 1.0
    ax.imshow(grid, cmap=CMAP, vmin=-limit, vmax=limit, aspect="auto")
    _write(ax, grid, dark=lambda v: abs(v) > 0.6 * limit, fontsize=7)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def _matrix(
    ax: Axes, values: torch.Tensor, title: str, vmax: float | None = None
) -> None:
    """Draw a matrix as a heatmap, symmetric around 0 unless ``vmax`` is given."""
    values = values.detach().numpy()
    if vmax is None:
        limit = float(abs(values).max()) or 1.0
        ax.imshow(values, cmap=CMAP, vmin=-limit, vmax=limit, aspect="auto")
    else:
        ax.imshow(values, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def qkv_one_token_figure(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    position: int,
    tokens: Sequence[str],
) -> Figure:
    """Draw one head's attention for the token at ``position``, step by step.

    From left to right: the token's vector ``x_i``; its query ``q_i``; the
    keys ``k_j`` and the values ``v_j`` of every token, one column each; its
    row of scores against every key; the softmax weights; and the output,
    the weighted sum of those values.

    Args:
        x: The sequence, one row per token.
        w_q: Query projection, the paper's ``W_Q`` (the transpose of an
            ``nn.Linear`` weight).
        w_k: Key projection, likewise.
        w_v: Value projection, likewise.
        position: Which token asks.
        tokens: One label per token.

    Returns:
        The figure, with seven axes.

    Shape:
        - x: ``(L, d_model)``
        - w_q, w_k, w_v: ``(d_model, d_k)``
    """
    # (L, d_k) each
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    d_k = q.shape[-1]
    # (L,)
    scores = k @ q[position] / math.sqrt(d_k)
    out, weights = scaled_dot_product_attention(q[position : position + 1], k, v)
    fig, axes = plt.subplots(
        1,
        7,
        figsize=(14, 3.8),
        gridspec_kw={"width_ratios": [1, 1, 2.6, 2.6, 2.4, 2.4, 1]},
    )
    i, name = position, tokens[position]
    _strip(axes[0], x[i], f"x_{i} ('{name}')\n(d_model = {x.shape[-1]})")
    _strip(axes[1], q[i], f"q_{i} = x_{i} W_Q0\n(d_k = {d_k})")
    labels = range(len(k))
    _columns(axes[2], k, "every key k_j = x_j W_K0", [f"k_{j}" for j in labels])
    _columns(axes[3], v, "every value v_j = x_j W_V0", [f"v_{j}" for j in labels])
    for ax, row, title in [
        (axes[4], scores, f"scores q_{i}·k_j / √d_k"),
        (axes[5], weights[0], "weights a_j = softmax"),
    ]:
        ax.barh(range(len(tokens)), row.detach().tolist(), color="#4c72b0")
        ax.set_yticks(
            range(len(tokens)), [f"k_{j} '{t}'" for j, t in enumerate(tokens)]
        )
        ax.invert_yaxis()
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(title, fontsize=9)
    axes[5].set_xlim(0, 1)
    _strip(axes[6], out[0], "output\nΣ_j a_j v_j")
    fig.suptitle(f"One head, one query: what token {i} ('{name}') reads", fontsize=11)
    fig.tight_layout()
    return fig


def split_heads_trace(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    h: int,
) -> dict[str, torch.Tensor]:
    """Run multi-head self-attention without biases and keep every stage.

    Args:
        x: The input sequences.
        w_q: Query projection, the paper's ``W_Q`` (the transpose of an
            ``nn.Linear`` weight); likewise the others.
        w_k: Key projection.
        w_v: Value projection.
        w_o: Output projection.
        h: Number of heads; must divide ``d_model``.

    Returns:
        The stages by name: ``"x"``, ``"q"`` (split into heads),
        ``"weights"``, ``"heads"``, ``"concat"`` and ``"output"``.

    Shape:
        - x: ``(B, L, d_model)``
        - w_q, w_k, w_v, w_o: ``(d_model, d_model)``
    """
    B, L, d_model = x.shape

    def split(t: torch.Tensor) -> torch.Tensor:
        # (B, h, L, d_k)
        return t.view(B, L, h, d_model // h).transpose(1, 2)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    # (B, h, L, d_k)
    heads, weights = scaled_dot_product_attention(q, k, v)
    # (B, L, d_model)
    concat = heads.transpose(1, 2).reshape(B, L, d_model)
    output = concat @ w_o
    return {
        "x": x,
        "q": q,
        "weights": weights,
        "heads": heads,
        "concat": concat,
        "output": output,
    }


def head_split_figure(stages: dict[str, torch.Tensor]) -> Figure:
    """Draw the stages of :func:`split_heads_trace` for the first sequence.

    Columns, left to right: the input, its queries cut into ``h`` heads, each
    head's attention weights, each head's output, the heads concatenated, and
    the output after ``W_O``. Each column's title carries the shape of what it
    draws (one sequence, so no batch axis), and every attention weight is
    written in its cell.

    Args:
        stages: What :func:`split_heads_trace` returns.

    Returns:
        The figure: ``3 + 3 h`` axes.
    """
    B, L, d_model = stages["x"].shape
    h, d_k = stages["q"].shape[1], stages["q"].shape[-1]
    fig = plt.figure(figsize=(13, 1.3 + 1.5 * h))
    grid = fig.add_gridspec(h, 6, width_ratios=[2, 1.2, 2, 1.2, 2, 2], wspace=0.4)
    wide = [
        (0, "x", f"input x, sequence 0\n(L, d_model) = ({L}, {d_model})"),
        (4, "concat", f"heads concatenated\n(L, h·d_k) = ({L}, {h * d_k})"),
        (5, "output", f"output = Concat · $W^O$\n(L, d_model) = ({L}, {d_model})"),
    ]
    columns = []
    for column, name, title in wide:
        ax = fig.add_subplot(grid[:, column])
        columns.append(ax)
        _matrix(ax, stages[name][0], title)
        if name == "concat":
            for cut in range(1, h):
                ax.axvline(cut * d_k - 0.5, color="black", lw=1.5)
    per_head = [
        (1, "q", f"queries of each head\n(L, d_k) = ({L}, {d_k})", None),
        (2, "weights", f"weights of each head\n(L, S) = ({L}, {L})", 1.0),
        (3, "heads", f"output of each head\n(L, d_k) = ({L}, {d_k})", None),
    ]
    for column, name, title, vmax in per_head:
        for head in range(h):
            ax = fig.add_subplot(grid[head, column])
            _matrix(ax, stages[name][0, head], title if head == 0 else "", vmax)
            if name == "weights":  # write each weight: a dark block says nothing
                weights = stages[name][0, head].detach().numpy()
                _write(ax, weights, dark=lambda v: v < 0.6, fontsize=8)
            if column == 1:
                ax.set_ylabel(f"head {head}", fontsize=9)
            if head == 0:
                columns.append(ax)
    fig.suptitle(
        f"Multi-head attention on sequence 0 of a batch of {B}: split the width"
        " into heads, attend, concatenate, mix"
    )
    fig.subplots_adjust(
        top=1 - 0.9 / (1.3 + 1.5 * h), bottom=0.03, left=0.04, right=0.99
    )
    return fig
