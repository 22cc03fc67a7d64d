"""Figures of how data flows through a model: the residual stream and the memory.

:func:`residual_stream_norms` measures, at every Add & Norm, the stream that
enters, what the sublayer adds and the stream that leaves, and
:func:`residual_stream_plot` draws them. :func:`cross_attention_flow` keeps an
encoder-decoder model's memory and the weights of every cross-attention that
reads it, and :func:`memory_flow_plot` draws them. Both measurements use
forward hooks and leave the model unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch

from .. import AddNorm, DecoderLayer, EncoderLayer, Transformer
from ..parts.attention import scaled_dot_product_attention

SUBLAYERS = {
    (EncoderLayer, "add_norm1"): "self-attention",
    (EncoderLayer, "add_norm2"): "feed-forward",
    (DecoderLayer, "add_norm1"): "self-attention",
    (DecoderLayer, "add_norm2"): "cross-attention",
    (DecoderLayer, "add_norm3"): "feed-forward",
}
"""The sublayer each Add & Norm of a layer wraps, by layer class and attribute."""


@dataclass(frozen=True)
class SublayerNorms:
    """The sizes around one Add & Norm: mean vector norms over the positions.

    Attributes:
        stack: Name of the stack, e.g. ``"encoder"``.
        layer: Index of the layer in its stack.
        sublayer: ``"self-attention"``, ``"cross-attention"`` or ``"feed-forward"``.
        stream: Mean norm of the stream ``x`` entering the block.
        update: Mean norm of what the sublayer adds to it, ``F(x)`` (post-norm)
            or ``F(norm(x))`` (pre-norm), before dropout.
        output: Mean norm of the stream leaving the block.
    """

    stack: str
    layer: int
    sublayer: str
    stream: float
    update: float
    output: float


def _mean_norm(x: torch.Tensor) -> float:
    return x.norm(dim=-1).mean().item()  # over (B, L)


def residual_stream_norms(
    model: nn.Module, *inputs: object, **kwargs: object
) -> list[SublayerNorms]:
    """Run ``model(*inputs, **kwargs)`` once and measure the stream at every Add & Norm.

    Runs under ``torch.no_grad()``; call ``model.eval()`` first to turn dropout
    off. The hook calls each sublayer again, to see what it adds.

    Args:
        model: Any module built from :class:`~transformer.models.layers.EncoderLayer`
            or :class:`~transformer.models.layers.DecoderLayer` layers.
        *inputs: The positional arguments of the forward call.
        **kwargs: Its keyword arguments.

    Returns:
        One record per Add & Norm, in the order they ran.

    Raises:
        TypeError: If ``model`` is not an ``nn.Module``.
        ValueError: If the model has no Add & Norm inside an encoder or decoder layer.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    modules = dict(model.named_modules())
    records: list[SublayerNorms] = []
    handles = []

    def hook_for(name: str, kind: str):
        stack, _, index = name.rsplit(".", 1)[0].rpartition(".layers.")

        def hook(block: AddNorm, args: tuple, output: torch.Tensor) -> None:
            x, sublayer = args
            update = sublayer(block.norm(x) if block.norm_first else x)
            norms = [_mean_norm(t) for t in (x, update, output)]
            records.append(SublayerNorms(stack, int(index), kind, *norms))

        return hook

    for name, module in modules.items():
        if not isinstance(module, AddNorm) or "." not in name:
            continue
        parent_name, attribute = name.rsplit(".", 1)
        kind = SUBLAYERS.get((type(modules[parent_name]), attribute))
        if kind is not None and ".layers." in parent_name:
            handles.append(module.register_forward_hook(hook_for(name, kind)))
    if not handles:
        raise ValueError("model must have EncoderLayer or DecoderLayer modules")
    try:
        with torch.no_grad():
            model(*inputs, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return records


def residual_stream_plot(
    records: Sequence[SublayerNorms], *, title: str = ""
) -> Figure:
    """Draw the stream's norm and each sublayer's contribution, per block.

    Args:
        records: The output of :func:`residual_stream_norms`.
        title: What the reader should look for.

    Returns:
        The figure.

    Raises:
        ValueError: If ``records`` is empty.
    """
    if not records:
        raise ValueError("records must hold at least one SublayerNorms, got none")
    fig, ax = plt.subplots(figsize=(max(6.4, 0.62 * len(records) + 1.5), 4.2))
    x = [float(i) for i in range(len(records))]
    width = 0.27
    bars = [
        ("stream entering, ‖x‖", "stream", "#9aa5b1"),
        ("sublayer adds, ‖F(x)‖", "update", "#d9822b"),
        ("stream leaving, after Add & Norm", "output", "#2b6cb0"),
    ]
    for offset, (label, field, color) in zip((-width, 0.0, width), bars):
        heights = [getattr(r, field) for r in records]
        ax.bar([i + offset for i in x], heights, width, label=label, color=color)
    names = [f"{r.stack[:3]} {r.layer}\n{r.sublayer}" for r in records]
    ax.set_xticks(x, names, rotation=90, fontsize=8)
    ax.set_ylabel("mean vector norm over positions")
    ax.set_title(title or "What each sublayer adds to the residual stream")
    top = max(max(r.stream, r.update, r.output) for r in records)
    ax.set_ylim(0, 1.35 * top)  # room for the legend above the bars
    ax.legend(loc="upper left", fontsize=8, ncols=3)
    fig.tight_layout()
    return fig


def cross_attention_flow(
    model: Transformer,
    src: torch.Tensor,
    tgt: torch.Tensor,
    src_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Run a model once; return its memory and each cross-attention's weights.

    A hook recomputes the weights from the module's own projections.

    Args:
        model: A :class:`~transformer.models.encoder_decoder.Transformer`, in evaluation
            mode.
        src: Source token ids.
        tgt: Target token ids, shifted right.
        src_mask: Optional source padding mask, ``True`` = may attend.

    Returns:
        ``(memory, weights)``: the encoder's output and one weight tensor per
        decoder layer, bottom layer first.

    Shape:
        - src: ``(B, S)``
        - tgt: ``(B, L)``
        - memory: ``(B, S, d_model)``
        - weights: ``N`` tensors ``(B, h, L, S)``

    Raises:
        TypeError: If ``model`` is not a ``Transformer``.
        ValueError: If the ids or the mask do not fit the model.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    weights: list[torch.Tensor] = []

    def hook(attn: nn.Module, args: tuple, output: torch.Tensor) -> None:
        query, key, _, mask = (*args, None)[:4]
        # (B, h, L, d_k) and (B, h, S, d_k)
        q, k, _ = attn.project(query, key, key)
        # (B, h, L, S)
        weights.append(scaled_dot_product_attention(q, k, k, mask)[1])

    layers = model.decoder.layers
    handles = [layer.cross_attn.register_forward_hook(hook) for layer in layers]
    try:
        with torch.no_grad():
            # (B, S, d_model)
            memory = model.encode(src, src_mask)
            model.decode(tgt, memory, src_mask)
    finally:
        for handle in handles:
            handle.remove()
    return memory, weights


def memory_flow_plot(
    memory: torch.Tensor,
    weights: Sequence[torch.Tensor],
    *,
    src_labels: Sequence[str],
    tgt_labels: Sequence[str],
    title: str = "",
) -> Figure:
    """Draw one example's memory and the cross-attention it feeds in each layer.

    Left, the memory as a heatmap (one row per source token); right, one
    panel per decoder layer, bottom layer at the bottom, with the weights
    averaged over the heads. An arrow from the memory to every panel marks
    where it enters, as the keys and values.

    Args:
        memory: The memory of one example.
        weights: One tensor per decoder layer, for the same example.
        src_labels: The ``S`` source tokens.
        tgt_labels: The ``L`` decoder input tokens.
        title: What the reader should look for.

    Returns:
        The figure.

    Shape:
        - memory: ``(S, d_model)``
        - weights: ``N`` tensors ``(h, L, S)``

    Raises:
        ValueError: If the shapes or the labels do not fit together.
    """
    if memory.ndim != 2 or not weights:
        raise ValueError(
            f"memory must have shape (S, d_model), weights be non-empty; got memory "
            f"shape {tuple(memory.shape)} and {len(weights)} weight tensors"
        )
    S = memory.shape[0]
    for n, w in enumerate(weights):
        if w.ndim != 3 or w.shape[-1] != S or w.shape[1] != len(tgt_labels):
            raise ValueError(
                f"weights[{n}] must have shape (h, L={len(tgt_labels)}, S={S}), "
                f"got {tuple(w.shape)}"
            )
    if len(src_labels) != S:
        raise ValueError(f"src_labels must have S={S} entries, got {len(src_labels)}")
    N = len(weights)
    fig = plt.figure(figsize=(9.5, 2.6 * N + 0.8))
    grid = fig.add_gridspec(N, 2, width_ratios=[1.3, 1], wspace=0.45, hspace=0.7)
    ax_mem = fig.add_subplot(grid[:, 0])
    values = memory.detach().float().numpy()
    limit = float(abs(values).max()) or 1.0
    ax_mem.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    ax_mem.set_yticks(range(S), src_labels)
    ax_mem.set_xlabel("feature (d_model)")
    ax_mem.set_ylabel("source token")
    ax_mem.set_title(
        f"memory {tuple(values.shape)}\nthe encoder's output, computed once",
        fontsize=10,
    )
    for n, w in enumerate(weights):
        ax = fig.add_subplot(grid[N - 1 - n, 1])  # bottom layer at the bottom
        ax.imshow(
            w.detach().float().mean(0).numpy(),
            cmap="viridis",
            vmin=0,
            vmax=1,
            aspect="auto",
        )
        ax.set_xticks(range(S), src_labels, fontsize=8)
        ax.set_yticks(range(len(tgt_labels)), tgt_labels, fontsize=8)
        ax.set_ylabel("decoder input", fontsize=8)
        ax.set_xlabel("source token (keys)" if n == 0 else "", fontsize=8)
        ax.set_title(
            f"decoder layer {n}: cross-attention weights\n"
            "queries from the decoder, keys and values = memory",
            fontsize=9,
        )
        start, end = (
            (values.shape[1] - 0.5, (S - 1) / 2),
            (-0.5, (len(tgt_labels) - 1) / 2),
        )
        style = dict(arrowstyle="-|>", color="#d9822b", lw=1.6, mutation_scale=14)
        fig.add_artist(
            ConnectionPatch(start, end, ax_mem.transData, ax.transData, **style)
        )
    if title:
        fig.suptitle(title)
    return fig
