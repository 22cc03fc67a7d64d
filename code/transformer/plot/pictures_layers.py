"""The two stacks unrolled, and dropout's places.

:func:`stacks_figure` draws an :class:`~transformer.models.stacks.Encoder` and a
:class:`~transformer.models.stacks.Decoder` as the modules hold them: one box per
layer, the final norm of each stack, and the encoder's output, the memory, led
into every decoder layer. The shapes written beside the arrows are the ones the
caller measured on real tensors. :func:`dropout_sites_figure` draws a stack of boxes,
each with the dropout that acts in it and who puts it there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from torch import nn

from .diagram import _BLOCK_H, _BLOCK_W, _block

LAYER_KIND = {"encoder": "feed_forward", "decoder": "attention"}
"""The diagram's kind of block whose colour fills each stack's layer boxes."""
MEMORY = "#2a7d2e"
"""Colour of the memory's box and of its arrows."""

_W, _H, _STEP = _BLOCK_W, _BLOCK_H, 1.25
_ENC_X, _DEC_X, _BUS_X = 0.0, 6.0, 3.0


def _box(ax: Axes, x: float, y: float, name: str, note: str, kind: str, gid: str):
    """Draw one of the diagram's rounded boxes at ``(x, y)`` and name it ``gid``."""
    _block(ax, x, y, name, kind, note)
    ax.patches[-1].set_gid(gid)


def _arrow(ax: Axes, start: tuple, end: tuple, gid: str, color: str = "black") -> None:
    """Draw an arrow from ``start`` to ``end``."""
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle="-|>", mutation_scale=10, color=color, lw=1, gid=gid
        )
    )


def _norm_label(stack: nn.Module) -> str:
    """Name the stack's final norm; ``nn.Identity`` means none (post-norm)."""
    if isinstance(stack.norm, nn.Identity):
        return "Identity (none)"
    return type(stack.norm).__name__


def stacks_figure(
    encoder: nn.Module,
    decoder: nn.Module,
    *,
    src_shape: Sequence[int],
    tgt_shape: Sequence[int],
    title: str = "Every decoder layer reads the same memory",
) -> Figure:
    """Draw the encoder's and the decoder's layers side by side, bottom to top.

    Args:
        encoder: An :class:`~transformer.models.stacks.Encoder`; one box is
            drawn per entry of its ``layers``, then its final ``norm``.
        decoder: A :class:`~transformer.models.stacks.Decoder`, drawn the same way.
        src_shape: Shape of the embedded source and of the memory,
            ``(B, S, d_model)``.
        tgt_shape: Shape of the embedded target and of the output,
            ``(B, L, d_model)``.
        title: Figure title.

    Returns:
        The figure. Its boxes and arrows carry ``gid`` names:
        ``encoder-layer-i``, ``decoder-layer-i``, ``memory-arrow-i``.

    Raises:
        ValueError: If the two stacks have different numbers of layers.
    """
    n = len(encoder.layers)
    if len(decoder.layers) != n:
        raise ValueError(
            f"encoder and decoder must have the same number of layers, got "
            f"{n} and {len(decoder.layers)}"
        )
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.95 * (n + 2)))
    src, tgt = tuple(src_shape), tuple(tgt_shape)
    ys = [1.0 + _STEP * i for i in range(n)]
    y_norm = 1.0 + _STEP * n
    y_top = y_norm + _STEP
    ax.text(_ENC_X, 0.0, f"embedded source {src}", ha="center", fontsize=8)
    ax.text(_DEC_X, 0.0, f"embedded target {tgt}", ha="center", fontsize=8)
    for stack, x in [("encoder", _ENC_X), ("decoder", _DEC_X)]:
        module = encoder if stack == "encoder" else decoder
        inner = "self-attn, FFN" if stack == "encoder" else "masked self, cross, FFN"
        _arrow(ax, (x, 0.3), (x, ys[0] - _H / 2 - 0.05), f"{stack}-in")
        for i, y in enumerate(ys):
            note = f"{type(module.layers[i]).__name__}: {inner}"
            _box(
                ax,
                x,
                y,
                f"{stack} layer {i}",
                note,
                LAYER_KIND[stack],
                f"{stack}-layer-{i}",
            )
            _arrow(ax, (x, y + _H / 2 + 0.05), (x, y + _STEP - _H / 2 - 0.05), "")
        _box(ax, x, y_norm, "final norm", _norm_label(module), "norm", f"{stack}-norm")
    _arrow(ax, (_ENC_X, y_norm + _H / 2 + 0.05), (_ENC_X, y_top - 0.25), "enc-out")
    ax.text(
        _ENC_X,
        y_top,
        f"memory {src}",
        ha="center",
        va="center",
        fontsize=8,
        color="white",
        bbox=dict(boxstyle="round", facecolor=MEMORY, edgecolor=MEMORY),
    )
    _arrow(ax, (_DEC_X, y_norm + _H / 2 + 0.05), (_DEC_X, y_top - 0.25), "dec-out")
    ax.text(_DEC_X, y_top, f"output {tgt}", ha="center", va="center", fontsize=8)
    ax.plot([_ENC_X + 0.8, _BUS_X, _BUS_X], [y_top, y_top, ys[0]], color=MEMORY, lw=1.2)
    for i, y in enumerate(ys):
        end = (_DEC_X - _W / 2 - 0.05, y)
        _arrow(ax, (_BUS_X, y), end, f"memory-arrow-{i}", MEMORY)
    ax.text(
        _BUS_X - 0.1,
        (ys[0] + y_top) / 2,
        "keys and values\nof cross-attention",
        fontsize=7.5,
        color=MEMORY,
        ha="right",
        va="center",
        rotation=90,
    )
    ax.set(xlim=(-2.2, 8.2), ylim=(-0.5, y_top + 0.6), title=title)
    ax.axis("off")
    fig.tight_layout()
    return fig


def _round_box(
    ax: Axes,
    x: float,
    y: float,
    w: float,
    text: str,
    *,
    h: float,
    size: float,
    gid: str,
) -> None:
    """Draw a grey rounded box ``w`` by ``h``, left edge ``x``, centre ``y``."""
    box = FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0.05", gid=gid)
    ax.add_patch(box).set(fc="whitesmoke", ec="black")
    ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=size)


DROPOUT_SOURCES = {"paper": "tab:red", "implementations": "tab:blue"}
"""Colour of a dropout site in :func:`dropout_sites_figure`, by who puts it there."""


def dropout_sites_figure(
    sites: Sequence[tuple[str, str, str]],
    *,
    colours: Mapping[str, str] = DROPOUT_SOURCES,
    title: str = "Where dropout acts in the model's input and one encoder layer",
) -> Figure:
    """Draw a stack of boxes, bottom to top, each with the dropout that acts in it.

    Each box gets a dot and the label ``dropout <where>`` at its right, both in
    the colour of whoever puts that dropout there; a legend names the colours.

    Args:
        sites: One ``(box, where, who)`` per box, bottom to top: the box's name,
            where dropout acts inside it, and who puts it there (a key of
            ``colours``).
        colours: The colour of each ``who``, in the legend's order.
        title: Figure title.

    Returns:
        The figure. Its boxes carry ``gid`` names ``site-i``, its dots
        ``dot-i``, bottom to top.

    Raises:
        ValueError: If ``sites`` is empty or a ``who`` is not a key of ``colours``.
    """
    unknown = sorted({who for *_, who in sites} - set(colours))
    if not sites or unknown:
        raise ValueError(
            f"sites must hold at least one (box, where, who), each who a key of "
            f"colours {list(colours)}; got {len(sites)} sites, unknown {unknown}"
        )
    fig, ax = plt.subplots(figsize=(8, 4.6))
    for i, (box, what, who) in enumerate(sites):
        y = 0.5 + 1.1 * i
        _round_box(ax, 0, y, 4.2, box, h=0.6, size=11, gid=f"site-{i}")
        ax.plot(4.4, y, "o", ms=9, color=colours[who], gid=f"dot-{i}")
        ax.text(4.6, y, f"dropout {what}", va="center", fontsize=10, color=colours[who])
        if i:
            ax.annotate(
                "", (2.1, y - 0.35), (2.1, y - 0.75), arrowprops={"arrowstyle": "->"}
            )
    for who, colour in colours.items():
        ax.plot([], [], "o", color=colour, label=f"dropout from the {who}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=2, frameon=False)
    ax.set(xlim=(-0.2, 9.4), ylim=(-0.1, 0.5 + 1.1 * len(sites)))
    ax.axis("off")
    ax.set_title(title)
    return fig
