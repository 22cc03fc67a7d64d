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
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

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
    """Draw ``values`` with ``imshow`` on ``ax`` (or a new figure), with ticks, labels and title."""
    if ax is None:
        _, ax = plt.subplots()
    image = ax.imshow(values.numpy(), **imshow)
    _label_axes(ax, values, xticklabels, yticklabels)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    return ax, image


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
    ax, image = _draw_matrix(matrix, ax, title=title, xlabel=xlabel, ylabel=ylabel,
                             xticklabels=xticklabels, yticklabels=yticklabels,
                             vmin=0.0, vmax=1.0, cmap="viridis")
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
    ax, _ = _draw_matrix(matrix.int(), ax, title=title, xlabel=xlabel, ylabel=ylabel,
                         xticklabels=xticklabels, yticklabels=yticklabels,
                         cmap=ListedColormap(MASK_COLORS), vmin=0, vmax=1)
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


def _running_mean(
    steps: Sequence[int], values: Sequence[float], window: int
) -> tuple[list[float], list[float]]:
    """Average each value with the ``window - 1`` values before it (fewer at the start).

    Each mean is drawn at the middle of the steps it averages, so that a
    smoothed curve does not lag behind the raw one.
    """
    xs, ys, total = [], [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        n = min(i + 1, window)
        xs.append((steps[i] + steps[i - n + 1]) / 2)
        ys.append(total / n)
    return xs, ys


def training_curves(
    history: object,
    *,
    axes: Sequence[Axes] | None = None,
    title: str = "",
    smooth: int = 10,
) -> Sequence[Axes]:
    """Draw loss and token accuracy against step, training batches beside held-out data.

    Args:
        history: A :class:`~transformer.train.History` (or anything with its
            ``step``, ``train_loss``, ``train_acc``, ``eval_step``,
            ``eval_loss`` and ``eval_acc`` lists).
        axes: Two axes, for the loss and the accuracy; a new figure when ``None``.
        title: Prefix of both panel titles, e.g. the task's name.
        smooth: Window of the running mean drawn over the noisy per-step
            training values; ``1`` draws them raw.

    Returns:
        The two axes.
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    ax_loss, ax_acc = axes
    prefix = f"{title}: " if title else ""
    for ax, train, held_out in [(ax_loss, history.train_loss, history.eval_loss),
                                (ax_acc, history.train_acc, history.eval_acc)]:
        ax.plot(*_running_mean(history.step, train, smooth), lw=1.2,
                label=f"training batches (mean of {smooth})" if smooth > 1 else "training batches")
        ax.plot(history.eval_step, held_out, "o-", ms=3, lw=1.2, label="held-out")
        ax.set_xlabel("step")
        ax.legend()
    ax_loss.set(yscale="log", ylabel="cross-entropy (log scale)",
                title=f"{prefix}loss falls on held-out data too")
    ax_acc.set(ylim=(0.0, 1.02), ylabel="token accuracy",
               title=f"{prefix}token accuracy")
    return axes


def compare_curves(
    histories: dict[str, object],
    *,
    key: str = "train_loss",
    ax: Axes | None = None,
    title: str = "Loss of each run",
    smooth: int = 10,
    log: bool = True,
) -> Axes:
    """Draw one curve of several training runs on one axes, one line per run.

    Args:
        histories: Runs by label, each a :class:`~transformer.train.History`.
        key: Which curve: ``"train_loss"``, ``"train_acc"`` (per step) or
            ``"eval_loss"``, ``"eval_acc"`` (per evaluation).
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        smooth: Running-mean window for per-step curves.
        log: Logarithmic y axis.

    Returns:
        The axes drawn on.

    Raises:
        ValueError: If ``key`` is not one of the four curves.
    """
    if key not in ("train_loss", "train_acc", "eval_loss", "eval_acc"):
        raise ValueError(
            f"key must be 'train_loss', 'train_acc', 'eval_loss' or 'eval_acc', got {key!r}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for label, history in histories.items():
        values = getattr(history, key)
        if key.startswith("train"):
            ax.plot(*_running_mean(history.step, values, smooth), lw=1.2, label=label)
        else:
            ax.plot(history.eval_step, values, "o-", ms=3, lw=1.2, label=label)
    kind = "held-out" if key.startswith("eval") else "training"
    what = "cross-entropy" if key.endswith("loss") else "token accuracy"
    ax.set(xlabel="step", ylabel=f"{kind} {what}" + (" (log scale)" if log else ""), title=title)
    if log:
        ax.set_yscale("log")
    ax.legend()
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

    Returns:
        The figure.

    Raises:
        ValueError: If ``weights`` is empty or ``titles`` has the wrong length.
    """
    matrices = list(weights)
    if not matrices:
        raise ValueError("weights must hold at least one matrix, got none")
    titles = list(titles) if titles is not None else [f"head {i}" for i in range(len(matrices))]
    if len(titles) != len(matrices):
        raise ValueError(
            f"titles must have one entry per matrix ({len(matrices)}), got {len(titles)}"
        )
    ncols = min(ncols, len(matrices))
    nrows = -(-len(matrices) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.9 * ncols, 2.8 * nrows + 0.5), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(matrices):
            ax.axis("off")
            continue
        attention_heatmap(matrices[k], ax=ax, title=titles[k], colorbar=False, annotate=False,
                          xticklabels=xticklabels, yticklabels=yticklabels,
                          xlabel=xlabel if k // ncols == nrows - 1 else "",
                          ylabel=ylabel if k % ncols == 0 else "")  # fmt: skip
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def position_accuracy_plot(
    accuracy: dict[str, torch.Tensor],
    *,
    ax: Axes | None = None,
    title: str = "Accuracy at each position",
    xlabel: str = "target position",
    chance: float | None = None,
) -> Axes:
    """Draw the accuracy at each position of several runs, one line per run.

    Args:
        accuracy: Per-position accuracies by label, each of shape ``(L,)``,
            e.g. from :func:`~transformer.metrics.position_accuracy`.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the position axis.
        chance: Draw a dotted line at this accuracy, the score of guessing.

    Returns:
        The axes drawn on.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for label, values in accuracy.items():
        values = torch.as_tensor(values).detach().cpu().float()
        ax.plot(range(len(values)), values.numpy(), "o-", ms=4, lw=1.2, label=label)
    if chance is not None:
        ax.axhline(chance, color="grey", lw=0.8, ls=":", label=f"chance ({chance:.2f})")
    ax.set(xlabel=xlabel, ylabel="token accuracy (held-out)", ylim=(-0.02, 1.05), title=title)
    ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ax.legend()
    return ax


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
    annotate: bool = False,
    aspect: str = "equal",
) -> Axes:
    """Draw any real matrix as a heatmap, e.g. a positional-encoding table or a weight matrix.

    Unlike :func:`attention_heatmap`, whose colours run from 0 to 1, the
    colour scale follows the data.

    Args:
        matrix: The matrix. Leading dimensions of size one are dropped.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the column axis.
        ylabel: Label of the row axis.
        colorbar_label: What the colours mean.
        centered: Use a diverging blue-white-red scale symmetric about zero,
            so that zero is white and the sign is visible; otherwise viridis
            from the minimum to the maximum.
        xticklabels: Names of the columns.
        yticklabels: Names of the rows.
        annotate: Write each value in its cell (for small matrices).
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
    scale = dict(cmap="RdBu_r", vmin=-limit, vmax=limit) if centered else dict(cmap="viridis")
    ax, image = _draw_matrix(values, ax, title=title, xlabel=xlabel, ylabel=ylabel,
                             xticklabels=xticklabels, yticklabels=yticklabels,
                             aspect=aspect, **scale)
    if annotate:
        for (i, j), v in _cells(values):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=colorbar_label)
    return ax


def line_plot(
    x: Sequence[float] | torch.Tensor,
    curves: dict[str, Sequence[float] | torch.Tensor],
    *,
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "x",
    ylabel: str = "y",
    logy: bool = False,
    marker: str = "",
) -> Axes:
    """Draw one or more curves over a shared x axis, with a legend naming each.

    Args:
        x: The shared x values.
        curves: The y values of each curve, by label; each as long as ``x``.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the x axis.
        ylabel: Label of the y axis.
        logy: Logarithmic y axis.
        marker: Matplotlib marker drawn at each point, e.g. ``"o"``; none by default.

    Returns:
        The axes drawn on.

    Raises:
        ValueError: If ``curves`` is empty or a curve's length differs from ``x``'s.
    """
    xs = torch.as_tensor(x).detach().cpu().double()
    if not curves:
        raise ValueError("curves must hold at least one curve, got none")
    if ax is None:
        _, ax = plt.subplots()
    for label, y in curves.items():
        ys = torch.as_tensor(y).detach().cpu().double()
        if ys.shape != xs.shape:
            raise ValueError(
                f"curve {label!r} must have one value per x, shape {tuple(xs.shape)}, "
                f"got shape {tuple(ys.shape)}"
            )
        ax.plot(xs.numpy(), ys.numpy(), marker=marker, ms=3, lw=1.5, label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if logy:
        ax.set_yscale("log")
    if len(curves) > 1:
        ax.legend()
    return ax


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
    """Draw a rounded box centred at ``(x, y)``: a name and, smaller, the package's name for it."""
    ax.add_patch(FancyBboxPatch(
        (x - _BLOCK_W / 2, y - _BLOCK_H / 2), _BLOCK_W, _BLOCK_H,
        boxstyle="round,pad=0,rounding_size=0.12",
        fc=ARCHITECTURE_COLORS[kind], ec="#333333", lw=1.0, zorder=2))  # fmt: skip
    ax.text(x, y + 0.15, text, ha="center", va="center", fontsize=9, zorder=3)
    ax.text(x, y - 0.19, note, ha="center", va="center", fontsize=7.5, family="monospace",
            color="#444444", zorder=3)


def _arrow(ax: Axes, points: Sequence[tuple[float, float]], color: str = "#333333") -> None:
    """Draw a polyline through ``points`` with an arrow head at the last one."""
    for k in range(len(points) - 1):
        head = "-|>" if k == len(points) - 2 else "-"
        ax.add_patch(FancyArrowPatch(points[k], points[k + 1], arrowstyle=head,
                                     mutation_scale=10, lw=1.1, color=color,
                                     shrinkA=0, shrinkB=0, zorder=1))  # fmt: skip


def architecture_diagram(
    *,
    ax: Axes | None = None,
    title: str = "The Transformer: follow the arrows from token ids to probabilities",
) -> Axes:
    """Draw the encoder-decoder Transformer as a block diagram, with the shape on every arrow.

    The encoder (left) and the decoder (right) each show one of their ``N``
    identical layers. Every block names the package's module that computes
    it, every arrow between blocks is labelled with the shape of the tensor
    it carries, grey arrows are the residual connections, and the encoder's
    output (the memory) enters each decoder layer's cross-attention as its
    keys and values.

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
    rows = [4.75 + 1.2 * i for i in range(6)]  # heights of the sublayer rows in the stacks

    for x, side, ids, n, n_rows in [(xe, -1, "source token ids", "S", 4),
                                    (xd, +1, "target token ids, shifted right", "L", 6)]:  # fmt: skip
        ax.text(x, -0.15, ids, ha="center", va="center", fontsize=9)
        _block(ax, x, 1.2, "Token embedding × √d_model", "embedding", "TokenEmbedding")
        _block(ax, x, 2.7, "+ positional encoding", "positional", "SinusoidalPositionalEncoding")
        for y0, y1, shape in [(0.05, 1.2 - h / 2, f"(B, {n})"),
                              (1.2 + h / 2, 2.7 - h / 2, f"(B, {n}, d_model)"),
                              (2.7 + h / 2, rows[0] - h / 2, f"(B, {n}, d_model)")]:  # fmt: skip
            _arrow(ax, [(x, y0), (x, y1)])
            ax.text(x + 0.12, min((y0 + y1) / 2, 3.33), shape, ha="left", va="center",
                    **_SHAPE_STYLE)
        top = rows[n_rows - 1] + h / 2
        ax.add_patch(FancyBboxPatch(
            (x - w / 2 - 0.55, 3.6), w + 1.1, top + 0.25 - 3.6,
            boxstyle="round,pad=0,rounding_size=0.2", fc="#f6f6f6", ec="#888888",
            lw=1.0, ls="--", zorder=0))  # fmt: skip
        ax.text(x - w / 2 - 0.5, top + 0.45, f"N × {'encoder' if side < 0 else 'decoder'} layer",
                ha="left", va="center", fontsize=9.5, fontweight="bold", color="#444444")
        for row in range(n_rows - 1):
            _arrow(ax, [(x, rows[row] + h / 2), (x, rows[row + 1] - h / 2)])
        x_res = x + side * (w / 2 + 0.28)
        for row in range(0, n_rows, 2):  # around each sublayer into its Add & Norm
            y_tap = rows[row] - h / 2 - (0.35 if row == 0 else 0.2)
            _arrow(ax, [(x, y_tap), (x_res, y_tap), (x_res, rows[row + 1]),
                        (x + side * w / 2, rows[row + 1])], color="#8a8a8a")  # fmt: skip
        for row in range(1, n_rows, 2):
            _block(ax, x, rows[row], "Add & Norm", "norm", "AddNorm")
        _block(ax, x, rows[n_rows - 2], "Position-wise feed-forward", "feed_forward",
               "PositionwiseFeedForward")

    _block(ax, xe, rows[0], "Multi-head self-attention", "attention", "MultiHeadAttention")
    _block(ax, xd, rows[0], "Masked multi-head self-attention", "attention",
           "MultiHeadAttention (causal)")
    _block(ax, xd, rows[2], "Multi-head cross-attention", "attention", "MultiHeadAttention")

    # The memory: the encoder's output is the keys and values of every cross-attention.
    x_gap, y_mem = xe + w / 2 + 0.7, rows[3] + h / 2 + 0.95  # just right of the encoder's box
    _arrow(ax, [(xe, rows[3] + h / 2), (xe, y_mem), (x_gap, y_mem), (x_gap, rows[2]),
                (xd - w / 2, rows[2])])  # fmt: skip
    ax.text((xe + x_gap) / 2, y_mem + 0.12, "memory (B, S, d_model)", ha="center", va="bottom",
            **_SHAPE_STYLE)
    ax.text(x_gap + 0.1, rows[2] + 0.08, "K, V", ha="left", va="bottom",
            **_SHAPE_STYLE)

    _block(ax, xd, 12.35, "Linear: one score per word", "output", "out_proj")
    _block(ax, xd, 13.65, "Softmax", "output", "next-token probabilities")
    for y0, y1, shape in [(rows[5] + h / 2, 12.35 - h / 2, "(B, L, d_model)"),
                          (12.35 + h / 2, 13.65 - h / 2, "(B, L, V) logits")]:  # fmt: skip
        _arrow(ax, [(xd, y0), (xd, y1)])
        ax.text(xd + 0.12, (y0 + y1) / 2, shape, ha="left", va="center", **_SHAPE_STYLE)
    return ax
