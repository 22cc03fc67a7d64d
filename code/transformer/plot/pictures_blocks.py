"""Pictures of the blocks: where the norm sits, and which mask each attention gets.

:func:`norm_placement_figure` draws the Add & Norm blocks of real encoders,
post-norm and pre-norm side by side, with the residual stream drawn thick so
that the reader can count the norms on it. :func:`layer_masks_figure` draws one
encoder layer and one decoder layer with, beside each attention, which mask
it was given and the shape of the weights that mask is broadcast to, read
from the weights the attention recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from ..models.layers import DecoderLayer, EncoderLayer
from ..models.stacks import Encoder
from .diagram import _SHAPE_STYLE, _arrow, _block

STREAM_COLOR = "#c0392b"
"""Colour of the residual stream in :func:`norm_placement_figure`."""

_ROW = 1.15  # vertical distance between two rows of boxes
_SIDE = 3.3  # x of the boxes on a branch; the stream runs at x = 0
_KINDS = {"self-attention": "attention", "cross-attention": "attention"}
_SUBLAYERS = {"add_norm1": "self-attention", "add_norm2": "feed-forward"}


def _add(ax: Axes, y: float) -> None:
    """Draw the ⊕ where a branch rejoins the stream."""
    ax.add_patch(Circle((0, y), 0.24, fc="white", ec=STREAM_COLOR, lw=2, zorder=3))
    ax.text(0, y, "+", ha="center", va="center", fontsize=13, zorder=4)


def _stream(ax: Axes, y0: float, y1: float) -> None:
    ax.plot([0, 0], [y0, y1], color=STREAM_COLOR, lw=3.5, zorder=1)


def _draw_encoder(ax: Axes, encoder: Encoder) -> tuple[int, float]:
    """Draw ``encoder``'s Add & Norm blocks bottom-up.

    Returns the number of norms on the stream and the height of the drawing.
    """
    y, on_stream = 0.0, 0
    ax.text(0, y - 0.35, "x (input of the stack)", ha="center", va="top", fontsize=9)
    for layer in encoder.layers:
        for name, sublayer in _SUBLAYERS.items():
            block = getattr(layer, name)
            module = (
                layer.self_attn if sublayer == "self-attention" else layer.feed_forward
            )
            norm = type(block.norm).__name__
            tap, a, b, c = y + 0.45, y + 1.0, y + 1.0 + _ROW, y + 1.0 + 2 * _ROW
            branch = (
                [(a, "norm, on the branch", "norm", norm)] if block.norm_first else []
            )
            kind = _KINDS.get(sublayer, "feed_forward")
            branch.append((b, sublayer, kind, type(module).__name__))
            _arrow(ax, [(0, tap), (_SIDE, tap), (_SIDE, branch[0][0] - 0.4)])
            for (y0, *_), (y1, *_) in zip(branch, branch[1:]):
                _arrow(ax, [(_SIDE, y0 + 0.4), (_SIDE, y1 - 0.4)])
            for yb, text, kind, note in branch:
                _block(ax, _SIDE, yb, text, kind, note)
            _arrow(ax, [(_SIDE - 2.0, b), (0.24, b)])
            _add(ax, b)
            if block.norm_first:
                _stream(ax, y, b - 0.24)
                y = b + 0.24
            else:
                _stream(ax, y, b - 0.24)
                _stream(ax, b + 0.24, c - 0.4)
                _block(ax, 0, c, "norm, on the stream", "norm", norm)
                on_stream += 1
                y = c + 0.4
    if not isinstance(encoder.norm, nn.Identity):
        top = y + 0.6
        _stream(ax, y, top - 0.4)
        _block(
            ax, 0, top, "final norm, on the stream", "norm", type(encoder.norm).__name__
        )
        on_stream += 1
        y = top + 0.4
    _stream(ax, y, y + 0.5)
    ax.text(0, y + 0.6, "output of the stack", ha="center", va="bottom", fontsize=9)
    ax.set_xlim(-2.3, _SIDE + 2.3)
    ax.axis("off")
    return on_stream, y + 1.1


def norm_placement_figure(
    encoders: Sequence[Encoder], *, titles: Sequence[str] | None = None
) -> Figure:
    """Draw each encoder's Add & Norm blocks side by side, the residual stream thick.

    The residual stream runs up the middle of each panel (thick, in
    ``STREAM_COLOR``); each sublayer sits on a branch to the right whose
    output is added back at a ⊕. A layer norm is drawn on the stream when the
    block is post-norm and on the branch when it is pre-norm (read from each
    :class:`~transformer.parts.norm.AddNorm`'s ``norm_first``), and the
    stack's final norm on the stream when it has one. Each panel's title
    ends with the number of norms the stream passes through.

    Args:
        encoders: The encoders to draw, one panel each (one layer each keeps
            the picture small).
        titles: A title for each panel; by default ``"post-norm"`` or
            ``"pre-norm"``, from the first block.

    Returns:
        The figure, one axes per encoder.

    Raises:
        TypeError: If an entry of ``encoders`` is not an ``Encoder``.
    """
    for encoder in encoders:
        if not isinstance(encoder, Encoder):
            raise TypeError(f"encoders must hold Encoders, got {type(encoder)}")
    rows = max(3 * len(e.layers) * 2 for e in encoders)
    fig, axes = plt.subplots(
        1, len(encoders), figsize=(4.6 * len(encoders), 1.0 + 0.62 * rows)
    )
    axes = [axes] if len(encoders) == 1 else list(axes)
    tops = []
    for i, (ax, encoder) in enumerate(zip(axes, encoders)):
        on_stream, top = _draw_encoder(ax, encoder)
        tops.append(top)
        first = encoder.layers[0].add_norm1.norm_first
        name = titles[i] if titles else ("pre-norm" if first else "post-norm")
        plural = "norm" if on_stream == 1 else "norms"
        ax.set_title(f"{name}: the stream passes {on_stream} {plural}", fontsize=10)
    for ax in axes:  # one scale for every panel
        ax.set_ylim(-1.0, max(tops))
    fig.tight_layout()
    return fig


def _mask_name(mask: torch.Tensor | None) -> str:
    """Name a mask by its shape and values: causal, padding, none, or other.

    Args:
        mask: A boolean mask, ``True`` = may attend, or ``None``.

    Returns:
        ``"no mask"``, ``"causal mask"`` (a square lower-triangular grid, the
        same for every sequence), ``"padding mask"`` (one row of keys per
        sequence, shape ``(B, 1, 1, S)``) or ``"mask"``.
    """
    if mask is None:
        return "no mask"
    if mask.dim() == 2 and mask.shape[0] == mask.shape[1]:
        if torch.equal(mask, torch.ones_like(mask).tril()):
            return "causal mask"
    if mask.dim() == 4 and mask.shape[1:3] == (1, 1):
        return "padding mask"
    return "mask"


def layer_masks_figure(
    enc_layer: EncoderLayer,
    dec_layer: DecoderLayer,
    *,
    src_mask: torch.Tensor | None,
    self_mask: torch.Tensor | None,
    cross_mask: torch.Tensor | None,
) -> tuple[Figure, dict[str, str]]:
    """Draw an encoder layer and a decoder layer, each attention labelled with its mask.

    Call it after both layers have run inside
    :func:`~transformer.tools.record.record_attention`: every attention's
    recorded weights give the ``(B, h, L, S)`` shape that its mask is
    broadcast to. Beside each attention the figure names the mask it was
    given (causal, padding or none), the mask's own shape and the weights' shape.
    A line on the left of each sublayer is its residual skip into the Add &
    Norm, and the output of every Add & Norm but the last of each layer is
    labelled with its name in the chapter's equations (``z``; ``u``, ``v``).
    An arrow carries the encoder's output, the memory, over the decoder and
    into the right side of the cross-attention, so that it crosses no skip.

    Args:
        enc_layer: The encoder layer, after a recorded call with ``src_mask``.
        dec_layer: The decoder layer, after a recorded call with the two masks.
        src_mask: The encoder's mask, ``True`` = may attend, or ``None``.
        self_mask: The decoder's self-attention mask, ``True`` = may attend.
        cross_mask: The cross-attention's mask, ``True`` = may attend.

    Returns:
        The figure, and the label drawn beside each attention, by its name.

    Raises:
        ValueError: If an attention has no recorded weights.
    """
    attentions = {
        "encoder self-attention": (enc_layer.self_attn, src_mask),
        "decoder self-attention": (dec_layer.self_attn, self_mask),
        "cross-attention": (dec_layer.cross_attn, cross_mask),
    }
    for name, (module, _) in attentions.items():
        if getattr(module, "attn_weights", None) is None:
            raise ValueError(
                f"the {name} has no recorded weights: run the layers inside "
                "record_attention first"
            )
    fig, ax = plt.subplots(figsize=(10.4, 5.9))
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.94)
    ax.set(xlim=(-0.4, 16.5), ylim=(-0.9, 7.9))
    ax.axis("off")
    ax.set_title(
        "Which mask goes into which attention, and the skip around every sublayer",
        fontsize=10,
    )
    xe, xd = 2.2, 10.2
    rows = [0.6 + 1.25 * i for i in range(6)]
    sub = ["Add & Norm", "feed-forward", "Add & Norm"]
    columns = [  # each column's boxes, and the names of its Add & Norms' outputs
        (xe, ["encoder self-attention", *sub], "z"),
        (xd, ["decoder self-attention", "Add & Norm", "cross-attention", *sub], "uv"),
    ]
    labels = {}
    for x, names, outputs in columns:
        for i, name in enumerate(names):
            kind = {"Add & Norm": "norm", "feed-forward": "feed_forward"}
            _block(ax, x, rows[i], name, kind.get(name, "attention"), "")
            if i:
                _arrow(ax, [(x, rows[i - 1] + 0.4), (x, rows[i] - 0.4)])
            if name == "Add & Norm":  # the residual skip around the sublayer below
                y0, xs = rows[i - 1] - 0.625, x - 2.3
                _arrow(ax, [(x, y0), (xs, y0), (xs, rows[i]), (x - 2.0, rows[i])])
                ax.patches[-1].set_gid("residual")
            if name in attentions:
                module, mask = attentions[name]
                shape = "None" if mask is None else str(tuple(mask.shape))
                weights = tuple(module.attn_weights.shape)
                labels[name] = f"{_mask_name(mask)}\nmask {shape}\nweights {weights}"
                ax.text(
                    x + 2.2,
                    rows[i] + 0.15,
                    labels[name],
                    ha="left",
                    va="top",
                    **_SHAPE_STYLE,
                )
        # the output of an Add & Norm feeds the next sublayer and its skip
        norm_rows = [rows[i] for i, name in enumerate(names) if name == "Add & Norm"]
        for out, y in zip(outputs, norm_rows):
            ax.text(x + 0.12, y + 0.625, f"${out}$", va="center", fontsize=11)
    weights = enc_layer.self_attn.attn_weights
    B, S = weights.shape[0], weights.shape[-1]
    L = dec_layer.cross_attn.attn_weights.shape[-2]
    for x, text in [
        (xe, f"source x ({B}, {S}, d_model)"),
        (xd, f"target y ({B}, {L}, d_model)"),
    ]:
        _arrow(ax, [(x, -0.45), (x, rows[0] - 0.4)])
        ax.text(x, -0.55, text, ha="center", va="top", fontsize=8.5)
    # over the decoder and into the cross-attention from the right: a line from the
    # left would cross the skip that runs around the cross-attention
    y_mem, x_right, y_in = rows[5] + 0.75, xd + 5.4, rows[2] + 0.3
    _arrow(
        ax,
        [
            (xe, rows[3] + 0.4),
            (xe, y_mem),
            (x_right, y_mem),
            (x_right, y_in),
            (xd + 2.0, y_in),
        ],
    )
    ax.patches[-1].set_gid("memory")
    ax.text(
        xe + 0.15,
        y_mem - 0.12,
        f"memory ({B}, {S}, d_model): keys and values",
        ha="left",
        va="top",
        **_SHAPE_STYLE,
    )
    return fig, labels
