"""Figures of Part II: shared key/value heads, the cache, the ablation.

Two figures for the modern-decoder chapter, which key/value head each
query head of grouped-query attention reads and how a preallocated KV cache
fills one position per generated token, and one for the ablation chapter:
the bits per character each of Part II's changes reached when the character
language model was trained with it. Each takes numbers computed on the page
from the package's own modules.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from itertools import cycle

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

PALETTE = (
    "#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#b7791f",
    "#4a5568",
)  # fmt: skip
"""Colours of the variants and of the key/value heads, in order."""
CACHE_COLORS = ("#f0f0f0", "#90b4de", "#dd6b20")
"""Colours of an empty slot, a slot held from before, and one written now."""
SEED_MARKERS = "osD^v"
"""Matplotlib's markers of the seeds of an ablation, in turn."""


def kv_groups_figure(groups: Mapping[str, torch.Tensor]) -> Figure:
    """Draw, for each attention, which key/value head every query head reads.

    Each panel puts the query heads in a row at the top and the key/value
    heads in a row below, and joins each query head to the head it reads.
    A key/value head and the query heads that read it share a colour.

    Args:
        groups: Panel title -> ``(h,)`` integer tensor whose entry ``i`` is
            the key/value head that query head ``i`` reads.

    Returns:
        The figure, one panel per entry of ``groups``.

    Raises:
        ValueError: If ``groups`` is empty or a tensor is not 1-D.
    """
    if not groups or any(g.dim() != 1 for g in groups.values()):
        raise ValueError("groups must map titles to 1-D tensors, at least one")
    fig, axes = plt.subplots(1, len(groups), figsize=(3.2 * len(groups), 2.6))
    axes = [axes] if len(groups) == 1 else list(axes)
    for ax, (title, reads) in zip(axes, groups.items()):
        reads = [int(j) for j in reads.tolist()]
        h, n_kv = len(reads), max(reads) + 1
        kv_x = [(j + 0.5) * h / n_kv - 0.5 for j in range(n_kv)]
        for i, j in enumerate(reads):
            colour = PALETTE[j % len(PALETTE)]
            ax.plot([i, kv_x[j]], [1, 0], color=colour, lw=1.5, zorder=1)
            ax.scatter([i], [1], s=180, marker="s", color=colour, zorder=2)
            ax.text(i, 1.18, f"q{i}", ha="center", fontsize=8)
        for j, x in enumerate(kv_x):
            ax.scatter([x], [0], s=320, marker="o", color=PALETTE[j % len(PALETTE)],
                       edgecolor="black", zorder=2)  # fmt: skip
            ax.text(x, -0.3, f"kv{j}", ha="center", fontsize=8)
        ax.set(xlim=(-0.8, h - 0.2), ylim=(-0.5, 1.4), xticks=[])
        ax.set_yticks([0, 1], ["key/value\nheads", "query\nheads"])
        ax.set_title(title, fontsize=10)
        ax.spines[:].set_visible(False)
    fig.tight_layout()
    return fig


def cache_fill_plot(
    states: torch.Tensor,
    *,
    row_labels: Sequence[str] = (),
    ax: Axes | None = None,
    names: Sequence[str] = (
        "allocated, empty",
        "held from before",
        "written by this call",
    ),
    xlabel: str = "position in the cache's buffer",
    ylabel: str = "call of the cache",
) -> Axes:
    """Draw a KV cache's buffer after each call: empty, held, or just written.

    Args:
        states: ``(calls, room)`` integers, one row per call of the cache and
            one column per position of its buffer: 0 for a position
            allocated but empty, 1 for one held from an earlier call, 2 for
            one written by this call.
        row_labels: A label per row, e.g. ``"prompt"``, ``"token 1"``.
        ax: Where to draw; a new figure if ``None``.
        names: The legend's names of states 0, 1 and 2.
        xlabel: Label of the position axis.
        ylabel: Label of the call axis.

    Returns:
        The ``Axes`` drawn on.

    Raises:
        ValueError: If ``states`` is not a matrix of values in 0, 1, 2, or
            ``names`` does not name three states.
    """
    if states.dim() != 2 or not bool(((states >= 0) & (states <= 2)).all()):
        raise ValueError(
            f"states must be a (calls, room) matrix of 0, 1 and 2, got shape "
            f"{tuple(states.shape)} with values {sorted(set(states.unique().tolist()))}"
        )
    if len(names) != 3:
        raise ValueError(f"names must name the 3 states, got {list(names)}")
    calls, room = states.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.35 * calls + 1.4))
    ax.imshow(states.numpy(), cmap=ListedColormap(CACHE_COLORS), vmin=0, vmax=2,
              aspect="auto", interpolation="nearest")  # fmt: skip
    ax.set_xticks(range(0, room, max(1, room // 8)))
    ax.set_yticks(range(calls), list(row_labels) or None)
    ax.set_xticks([x - 0.5 for x in range(1, room)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, calls)], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.8)
    ax.tick_params(which="minor", length=0)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.legend(
        handles=[Patch(color=c, label=n) for c, n in zip(CACHE_COLORS, names)],
        loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=3, fontsize=8,
    )  # fmt: skip
    return ax


def ablation_figure(
    bpc: Mapping[str, Sequence[float]],
    *,
    baseline: str = "2017",
    seeds: Sequence[int] = (),
) -> Figure:
    """Draw each variant's bits per character, one marker per seed, and their mean.

    One row per variant: every seed's bits per character as a marker and their
    mean as a bar mark. A dashed line marks the baseline's mean and a grey
    band the range of the baseline's seeds, the spread that luck alone gives.
    Run i of every variant gets marker i of ``SEED_MARKERS`` (in turn); given
    ``seeds``, the legend names each seed's marker.

    Args:
        bpc: Variant -> its bits per character, one per seed.
        baseline: The variant the others are compared with.
        seeds: The seeds of the runs, in their order, for the legend.

    Returns:
        The figure, with one panel.

    Raises:
        ValueError: If ``baseline`` is missing.
    """
    if baseline not in bpc:
        raise ValueError(f"bpc must name {baseline!r}, got {sorted(bpc)}")
    names = list(bpc)
    rows = range(len(names))
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(names) + 1.4))
    ax.axvspan(min(bpc[baseline]), max(bpc[baseline]), color="0.9", zorder=0,
               label=f"range of {baseline}'s seeds")  # fmt: skip
    for row, name in zip(rows, names):
        colour = PALETTE[row % len(PALETTE)]
        n = len(bpc[name])
        # each seed a little above or below the row, so that equal values stay seen
        ys = [row + 0.15 * (i - (n - 1) / 2) for i in range(n)]
        for x, y, marker in zip(bpc[name], ys, cycle(SEED_MARKERS)):
            ax.scatter([x], [y], color=colour, marker=marker, s=24, zorder=2)
        ax.plot([statistics.fmean(bpc[name])] * 2, [row - 0.3, row + 0.3],
                color=colour, lw=2)  # fmt: skip
    ax.axvline(statistics.fmean(bpc[baseline]), color="grey", ls="--", lw=1,
               label=f"{baseline}'s mean")  # fmt: skip
    ax.set_yticks(list(rows), names)
    ax.invert_yaxis()
    ax.set_xlabel("held-out bits per character (lower is better)")
    for seed, marker in zip(seeds, cycle(SEED_MARKERS)):  # in no variant's colour
        ax.scatter([], [], marker=marker, color="0.3", s=24, label=f"seed {seed}")
    ax.set_title("Markers: seeds; bar: their mean", fontsize=10)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig


CHANGED_COLOR = "#c0392b"
"""Edge colour of a step that the other model does not have."""


_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "swiglu": "SwiGLU"}


def _steps(
    model: torch.nn.Module,
) -> tuple[list[tuple[str, str, str]], tuple[int, int]]:
    """Return ``(text, package name, kind)`` of each step of a decoder, bottom up,
    and the first and last index of the steps of one layer."""
    layer = model.stack.layers[0]
    attn, ffn = layer.self_attn, layer.feed_forward
    norm = type(layer.add_norm1.norm).__name__
    positional = type(model.positional).__name__
    steps = [("Token embedding", type(model.embed).__name__, "embedding")]
    if model.embed.scale != 1.0:
        steps.append(("× √d_model", "scale_embeddings", "embedding"))
    if "Sinusoidal" in positional or "Learned" in positional:
        steps.append(("+ positions", positional, "positional"))
    rope = " + RoPE" if attn.rope is not None else ""
    sublayers = [
        (f"Self-attention{rope}", f"{attn.h} q heads, {attn.n_kv_heads} kv heads"),
        (
            "Feed-forward, "
            + _ACTIVATION_NAMES[getattr(ffn, "activation_name", "swiglu")],
            type(ffn).__name__,
        ),
    ]
    kinds = ("attention", "feed_forward")
    first = len(steps)
    for (text, note), kind in zip(sublayers, kinds):
        if layer.add_norm1.norm_first:
            steps += [(norm, "pre-norm", "norm"), (text, note, kind)]
            steps.append(("+ residual", "AddNorm", "positional"))
        else:
            steps += [(text, note, kind), (f"+ residual, {norm}", "AddNorm", "norm")]
    span = (first, len(steps) - 1)  # the rows of one layer
    if not isinstance(model.stack.norm, torch.nn.Identity):
        steps.append((type(model.stack.norm).__name__, "final norm", "norm"))
    steps.append(("Linear: one score per token", "out_proj", "output"))
    if model.out_proj.bias is not None:
        steps.append(("+ bias", "output_bias", "output"))
    return steps, span


def modern_layer_figure(
    models: Mapping[str, torch.nn.Module], *, title: str = ""
) -> Figure:
    """Draw decoder-only models side by side, step by step, from their modules.

    Each column reads one model's modules: its embedding (and its scaling by
    ``sqrt(d_model)``, if any), its positions (if added to the embeddings),
    one layer's sublayers and norms in the order they run, the final norm and
    the output layer (and its bias, if any). A bracket marks the
    layer's steps, which the model repeats ``N`` times. A line on the left
    of each sublayer's branch (its norm too, if pre-norm) is the residual
    skip: it carries the branch's input around it into the ``+ residual``
    box. A step whose text no other column has gets a red edge: that is
    where the models differ.

    Args:
        models: The models by column title, e.g. ``{"2017": ..., "LLaMA-style": ...}``;
            each a :class:`~transformer.models.decoder_only.DecoderOnlyTransformer`.
        title: What the reader should look for.

    Returns:
        The figure, one axes with every column.
    """
    # deferred: the diagram module's helpers draw the boxes
    from .diagram import _arrow, _block

    columns, spans = {}, {}
    for name, model in models.items():
        columns[name], spans[name] = _steps(model)
    n_rows = max(map(len, columns.values()))
    fig, ax = plt.subplots(figsize=(3.6 * len(columns), 0.6 + 0.62 * n_rows))
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.93)
    ax.set(xlim=(-0.2, 5.3 * len(columns) + 0.1), ylim=(-0.9, 1.1 * n_rows - 0.6))
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    for c, (name, steps) in enumerate(columns.items()):
        x = 2.3 + 5.3 * c
        others = {s[0] for n, o in columns.items() if n != name for s in o}
        ax.text(x, -0.6, name, ha="center", va="center", fontsize=10, fontweight="bold")
        for r, (text, note, kind) in enumerate(steps):
            y = 1.1 * r
            _block(ax, x, y, text, kind, note)
            if text not in others:
                edge = dict(fc="none", ec=CHANGED_COLOR, lw=2.2, zorder=4)
                ax.add_patch(plt.Rectangle((x - 2.05, y - 0.45), 4.1, 0.9, **edge))
            if r:
                _arrow(ax, [(x, y - 1.1 + 0.4), (x, y - 0.4)])
        start = spans[name][0]  # the skip: from below a branch into its "+ residual"
        for r, (text, _, _) in enumerate(steps):
            if text.startswith("+ residual"):
                y0, y1, xs = 1.1 * start - 0.55, 1.1 * r, x - 2.25
                _arrow(ax, [(x, y0), (xs, y0), (xs, y1), (x - 2.0, y1)])
                ax.patches[-1].set_gid("residual")
                start = r + 1
        _repeat_bracket(ax, x + 2.2, spans[name], len(models[name].stack.layers))
    return fig


def _repeat_bracket(ax: Axes, x: float, span: tuple[int, int], n_layers: int) -> None:
    """Bracket the rows ``span`` (first, last) at ``x`` and label them ``× N``."""
    bottom, top = 1.1 * span[0] - 0.45, 1.1 * span[1] + 0.45
    ax.plot([x, x + 0.15, x + 0.15, x], [bottom, bottom, top, top], color="0.3", lw=1.2)
    ax.text(x + 0.3, (bottom + top) / 2, f"× N = {n_layers}", rotation=90,
            ha="center", va="center", fontsize=9)  # fmt: skip
