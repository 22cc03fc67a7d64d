"""Pictures for the first chapters: token batches, a lookup, attention's shapes.

Each function computes what it draws with the package's own code (a
:class:`~transformer.parts.embedding.TokenEmbedding`,
:func:`~transformer.parts.masks.padding_mask`, or
:func:`~transformer.parts.attention.scaled_dot_product_attention`), so a
figure cannot show a different computation from the one the chapter runs.
Every matrix is drawn with square cells, so its width and height on the page
are its shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch, Rectangle

from ..parts.attention import scaled_dot_product_attention
from ..parts.embedding import TokenEmbedding
from ..parts.masks import padding_mask

CMAP = "RdBu_r"
HIGHLIGHT = "#d62728"
PAD_FACE = "0.75"
"""Fill of a cell that holds ``<pad>``, in the batch and in its mask."""


def _cells(
    ax: Axes,
    values: torch.Tensor,
    title: str,
    *,
    vmin: float | None = None,
    limit: float | None = None,
) -> None:
    """Draw a matrix with square cells, in ``[-limit, limit]`` unless ``vmin`` is given.

    Without ``limit`` the scale is symmetric around 0 and fits ``values``.
    """
    data = values.detach().float().cpu().numpy()
    if vmin is None:
        limit = limit or float(abs(data).max()) or 1.0
        ax.imshow(data, cmap=CMAP, vmin=-limit, vmax=limit, aspect="equal")
    else:
        ax.imshow(data, cmap="viridis", vmin=vmin, vmax=1.0, aspect="equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def padded_batch_figure(
    batch: torch.Tensor, lengths: torch.Tensor | Sequence[int], tokens: Sequence[str]
) -> Figure:
    """Draw a padded batch of token ids beside its padding mask.

    Left, one cell per token, labelled with the token it stands for; right,
    the :func:`~transformer.parts.masks.padding_mask` of ``lengths``, 1 at a
    real token and 0 at padding. In both panels a cell is grey where the
    mask is 0, so the grey cells are the ``<pad>`` cells.

    Args:
        batch: The padded token ids, one sequence per row.
        lengths: The true length of each sequence.
        tokens: One label per vocabulary entry, indexed by id.

    Returns:
        The figure, with two axes: the batch and its mask.

    Shape:
        - batch: ``(B, L)``
        - lengths: ``(B,)``
    """
    B, L = batch.shape
    # (B, L): True at real tokens
    keep = padding_mask(lengths, L)[:, 0, 0]
    fig, (ids_ax, mask_ax) = plt.subplots(
        1, 2, figsize=(10, 0.5 + 0.7 * B), gridspec_kw={"width_ratios": [3, 2]}
    )
    panels = [
        (ids_ax, "the padded batch (B, L): <pad> in grey"),
        (mask_ax, "padding mask: 1 = real token, 0 = <pad>"),
    ]
    for ax, title in panels:
        for b, (ids_row, keep_row) in enumerate(zip(batch.tolist(), keep.tolist())):
            for t, (i, real) in enumerate(zip(ids_row, keep_row)):
                face = "white" if real else PAD_FACE
                ax.add_patch(Rectangle((t, b), 1, 1, edgecolor="black", facecolor=face))
                text = tokens[i] if ax is ids_ax else str(int(real))
                ax.text(t + 0.5, b + 0.5, text, ha="center", va="center", fontsize=9)
        ax.set(xlim=(0, L), ylim=(B, 0), title=title, xlabel="position")
        ax.set_xticks([t + 0.5 for t in range(L)], [str(t) for t in range(L)])
        ax.set_yticks([b + 0.5 for b in range(B)], [f"row {b}" for b in range(B)])
        ax.set_aspect("equal")
    fig.tight_layout()
    return fig


def shift_right_figure(
    decoder_input: Sequence[int], target: Sequence[int], tokens: Sequence[str]
) -> Figure:
    """Draw a decoder's input above its target, with the shift between them.

    One box per position in each row. An arrow goes from the target token at
    each position ``t`` up to the input token at ``t + 1``, the same token
    one position later; the last target token (``<eos>``) has none.

    Args:
        decoder_input: The ids the decoder reads, ``<bos>`` first.
        target: The ids it must predict, one per input position.
        tokens: One label per vocabulary entry, indexed by id.

    Returns:
        The figure, with one axes.

    Raises:
        ValueError: If ``target`` and ``decoder_input`` differ in length, or
            ``target`` is not ``decoder_input`` shifted left by one position.
    """
    n = len(decoder_input)
    if len(target) != n:
        raise ValueError(
            f"target must have one id per input position ({n}), got {len(target)}"
        )
    if list(target[:-1]) != list(decoder_input[1:]):
        raise ValueError("target[t] must equal decoder_input[t + 1] for every t")
    fig, ax = plt.subplots(figsize=(1.0 + n, 2.2))
    for y, ids_row in [(1.6, decoder_input), (0, target)]:
        for t, i in enumerate(ids_row):
            box = Rectangle(
                (t + 0.05, y), 0.9, 0.8, edgecolor="black", facecolor="white"
            )
            ax.add_patch(box)
            ax.text(t + 0.5, y + 0.4, tokens[i], ha="center", va="center")
    for t in range(n - 1):
        ax.annotate(
            "",
            xy=(t + 1.5, 1.6),
            xytext=(t + 0.5, 0.8),
            arrowprops={"arrowstyle": "->", "color": "tab:red"},
        )
    ax.set(xlim=(0, n), ylim=(-0.1, 2.5), xlabel="position")
    ax.set_xticks([t + 0.5 for t in range(n)], [str(t) for t in range(n)])
    ax.set_yticks([0.4, 2.0], ["target", "decoder input"])
    ax.set_title("shifted right: each target token is the input one position later")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def embedding_lookup_figure(
    embed: TokenEmbedding,
    ids: Sequence[int],
    tokens: Sequence[str],
) -> Figure:
    """Draw a lookup: each id picks one row of the table, scaled by ``sqrt(d_model)``.

    Left, the whole table ``embed.weight``, one row per vocabulary entry,
    with the rows of ``ids`` framed. Right, the output of ``embed`` on
    ``ids``, one row per position, labelled on the right, with an arrow from
    each framed row to the output row it becomes. Both panels share one
    colour scale, shown by a colour bar, so the scaled rows look stronger.

    Args:
        embed: The embedding to look up in.
        ids: The token ids of one sequence, in order.
        tokens: One label per vocabulary entry, ``V`` in all.

    Returns:
        The figure, with three axes: the table, the looked-up vectors and
        their shared colour bar.

    Shape:
        - embed.weight: ``(V, d_model)``
        - output drawn on the right: ``(len(ids), d_model)``

    Raises:
        ValueError: If ``tokens`` does not name every row of the table.
    """
    V, d_model = embed.weight.shape
    if len(tokens) != V:
        raise ValueError(f"tokens must name all V = {V} rows, got {len(tokens)}")
    with torch.no_grad():
        # (len(ids), d_model)
        looked_up = embed(torch.tensor([list(ids)]))[0]
    fig, (table_ax, out_ax) = plt.subplots(
        1, 2, figsize=(8.4, 0.26 * V + 1.6), gridspec_kw={"wspace": 0.9}
    )
    limit = float(max(embed.weight.abs().max(), looked_up.abs().max())) or 1.0
    _cells(
        table_ax,
        embed.weight,
        f"table E: (V, d_model) = ({V}, {d_model})",
        limit=limit,
    )
    table_ax.set_yticks(range(V), [f"{i} {t}" for i, t in enumerate(tokens)])
    table_ax.tick_params(axis="y", labelsize=8)
    n = len(ids)
    title = f"embed(ids) = √{d_model} · E[ids]: ({n}, {d_model})"
    _cells(out_ax, looked_up, title, limit=limit)
    out_ax.set_yticks(
        range(n), [f"position {p}: {tokens[i]}" for p, i in enumerate(ids)]
    )
    out_ax.yaxis.tick_right()
    out_ax.tick_params(axis="y", labelsize=8)
    for position, i in enumerate(ids):
        # inset a little, so that two framed neighbours do not seem to frame
        # the row between them
        table_ax.add_patch(
            Rectangle(
                (-0.45, i - 0.4), d_model - 0.1, 0.8, fill=False, ec=HIGHLIGHT, lw=1.6
            )
        )
        fig.add_artist(
            ConnectionPatch(
                xyA=(d_model - 0.5, i),
                coordsA=table_ax.transData,
                xyB=(-0.5, position),
                coordsB=out_ax.transData,
                arrowstyle="->",
                color=HIGHLIGHT,
                lw=1.0,
            )
        )
    fig.colorbar(
        out_ax.images[0], ax=[table_ax, out_ax], location="bottom", shrink=0.5
    ).set_label("entry value (one scale for both panels)", fontsize=8)
    fig.suptitle("Each id selects one row of the table", fontsize=11)
    return fig


def attention_shapes_figure(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
) -> Figure:
    """Draw the matrix products of attention with their shapes, from real tensors.

    Left to right: ``Q`` times ``K^T`` gives the ``(L, S)`` weights (after
    scaling and the softmax), which times ``V`` give the ``(L, d_v)`` output.
    Every panel is one tensor of the computation, drawn with square cells, so
    the inner sizes that must agree line up by eye.

    Args:
        query: The queries of one sequence.
        key: Its keys.
        value: Its values.

    Returns:
        The figure, with five axes: ``Q``, ``K^T``, the weights, ``V`` and
        the output, in that order.

    Shape:
        - query: ``(L, d_k)``
        - key: ``(S, d_k)``
        - value: ``(S, d_v)``
    """
    output, weights = scaled_dot_product_attention(query, key, value)
    (L, d_k), (S, d_v) = query.shape, value.shape
    panels = [
        (query, f"Q\n(L, d_k) = ({L}, {d_k})", None),
        (key.transpose(0, 1), f"Kᵀ\n(d_k, S) = ({d_k}, {S})", None),
        (weights, f"softmax(QKᵀ/√{d_k})\n(L, S) = ({L}, {S})", 0.0),
        (value, f"V\n(S, d_v) = ({S}, {d_v})", None),
        (output, f"output\n(L, d_v) = ({L}, {d_v})", None),
    ]
    widths = [d_k, S, S, d_v, d_v]
    fig, axes = plt.subplots(
        1,
        5,
        figsize=(11, 3.4),
        gridspec_kw={"width_ratios": widths, "wspace": 0.55},
    )
    for ax, (tensor, title, vmin) in zip(axes, panels):
        _cells(ax, tensor, title, vmin=vmin)
    for ax, sign in zip(axes[:-1], ["·", "→", "·", "→"]):
        ax.annotate(
            sign,
            xy=(1.0, 0.5),
            xycoords="axes fraction",
            xytext=(14, 0),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=18,
        )
    fig.suptitle("Attention is two matrix products with a softmax between", fontsize=11)
    return fig
