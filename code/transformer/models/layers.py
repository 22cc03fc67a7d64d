"""One encoder layer and one decoder layer: attention and feed-forward in Add & Norm."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import contract, entry
from ..checks.tensors import check_like, check_mask, check_sequence, shape_str
from ..parts.feedforward import PositionwiseFeedForward
from ..parts.gqa import GroupedQueryAttention
from ..parts.kv_cache import LayerKVCache
from ..parts.multihead import MultiHeadAttention
from ..parts.norm import AddNorm
from ..parts.rotary import RotaryEmbedding
from ..parts.swiglu import SwiGLU


def _feed_forward(
    d_model: int, d_ff: int, dropout: float, activation: str
) -> nn.Module:
    """Build the feed-forward network an ``activation`` names; ``"swiglu"`` is gated."""
    if activation == "swiglu":
        return SwiGLU(d_model, d_ff, dropout=dropout)
    return PositionwiseFeedForward(
        d_model, d_ff, dropout=dropout, activation=activation
    )


class EncoderLayer(nn.Module):
    """Let every position attend to every other, then transform each position.

    Two sublayers, each wrapped in :class:`~transformer.parts.norm.AddNorm`:
    multi-head self-attention, then the position-wise feed-forward network.
    The same ``dropout`` is used for the attention weights, the hidden
    feed-forward activations and both residual branches, as in PyTorch's
    ``nn.TransformerEncoderLayer``.

    Args:
        d_model: Width of the sequence.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward network.
        dropout: Dropout probability, in training only.
        activation: ``"relu"``, ``"gelu"`` or ``"swiglu"`` (a
            :class:`~transformer.parts.swiglu.SwiGLU` network of hidden width ``d_ff``).
        norm_first: ``False`` for post-norm (the paper), ``True`` for pre-norm.
        eps: The norms' ``eps``.
        norm: ``"layer"`` (the paper) or ``"rms"``.
        n_kv_heads: Key and value heads of a
            :class:`~transformer.parts.gqa.GroupedQueryAttention`; with it or
            ``rope``, the self-attention is grouped-query attention without
            biases, else :class:`~transformer.parts.multihead.MultiHeadAttention`.
        rope: A :class:`~transformer.parts.rotary.RotaryEmbedding` for the queries
            and keys, shared by the layers of a stack.

    Attributes:
        self_attn: The :class:`~transformer.parts.multihead.MultiHeadAttention` (or
            :class:`~transformer.parts.gqa.GroupedQueryAttention`); inside
            :func:`~transformer.tools.record.record_attention` its ``attn_weights`` hold
            the
            latest ``(B, h, L, L)`` weights.
        feed_forward: The feed-forward network.
        add_norm1: Residual and norm around the self-attention.
        add_norm2: Residual and norm around the feed-forward network.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or ``activation`` is
            unknown.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        *,
        norm: str = "layer",
        n_kv_heads: int | None = None,
        rope: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        self.d_model, self.h = d_model, h
        if n_kv_heads is None and rope is None:
            self.self_attn = MultiHeadAttention(d_model, h, dropout)
        else:
            kv = h if n_kv_heads is None else n_kv_heads
            self.self_attn = GroupedQueryAttention(d_model, h, kv, rope, False, dropout)
        self.feed_forward = _feed_forward(d_model, d_ff, dropout, activation)
        self.add_norm1 = AddNorm(d_model, dropout, norm_first, eps, norm)
        self.add_norm2 = AddNorm(d_model, dropout, norm_first, eps, norm)

    @entry
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        cache: LayerKVCache | None = None,
    ) -> torch.Tensor:
        """Run self-attention and the feed-forward network over ``x``.

        Args:
            x: The source sequence.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, S)``; typically a ``(B, 1, 1, L)`` padding mask.
                A 2-D mask is read as ``(L, S)``, the same for every sequence.
            cache: The layer's KV cache while generating; ``S`` counts the
                cached positions too.

        Returns:
            The transformed sequence.

        Shape:
            - x: ``(B, L, d_model)``
            - mask: broadcastable to ``(B, h, L, L)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``mask`` is
                not boolean.
            ValueError: If ``x`` or ``mask`` has the wrong shape.
        """
        check_encoder_inputs(self, x, mask, cache)
        if isinstance(self.self_attn, GroupedQueryAttention):
            x = self.add_norm1(x, lambda y: self.self_attn(y, mask, cache=cache))
        else:
            x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, mask, cache=cache))
        return self.add_norm2(x, self.feed_forward)


class DecoderLayer(nn.Module):
    """Attend to the earlier target positions, then to the source, then transform.

    Three sublayers, each wrapped in :class:`~transformer.parts.norm.AddNorm`:
    masked multi-head self-attention over the target, multi-head
    cross-attention whose keys and values are the encoder's output
    (``memory``), and the position-wise feed-forward network.

    Args:
        d_model: Width of the sequences.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward network.
        dropout: Dropout probability, in training only.
        activation: ``"relu"``, ``"gelu"`` or ``"swiglu"``.
        norm_first: ``False`` for post-norm (the paper), ``True`` for pre-norm.
        eps: The norms' ``eps``.
        norm: ``"layer"`` (the paper) or ``"rms"``.

    Attributes:
        self_attn: Self-attention over the target, weights ``(B, h, L, L)``.
        cross_attn: Attention from the target to ``memory``, weights
            ``(B, h, L,
            S)``.
        feed_forward: The :class:`~transformer.parts.feedforward.PositionwiseFeedForward`.
        add_norm1: Residual and norm around the self-attention.
        add_norm2: Residual and norm around the cross-attention.
        add_norm3: Residual and norm around the feed-forward network.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or ``activation`` is
            unknown.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        *,
        norm: str = "layer",
    ) -> None:
        super().__init__()
        self.d_model, self.h = d_model, h
        self.self_attn = MultiHeadAttention(d_model, h, dropout)
        self.cross_attn = MultiHeadAttention(d_model, h, dropout)
        self.feed_forward = _feed_forward(d_model, d_ff, dropout, activation)
        self.add_norm1 = AddNorm(d_model, dropout, norm_first, eps, norm)
        self.add_norm2 = AddNorm(d_model, dropout, norm_first, eps, norm)
        self.add_norm3 = AddNorm(d_model, dropout, norm_first, eps, norm)

    @entry
    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        cross_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run masked self-attention, cross-attention to ``memory``, then feed-forward.

        Args:
            x: The target sequence.
            memory: The encoder's output for the source sequence.
            self_mask: Optional boolean mask over the target, ``True`` = may
                attend, broadcastable to ``(B, h, L, L)``; usually
                :func:`~transformer.parts.masks.causal_mask`, possibly combined with
                target padding. ``None`` lets every position see every other.
            cross_mask: Optional boolean mask over the source, ``True`` = may
                attend, broadcastable to ``(B, h, L, S)``; usually the source's
                ``(B, 1, 1, S)`` padding mask. It must be 4-D: give a ``(B, S)``
                mask its axes with ``mask[:, None, None, :]``.

        Returns:
            The transformed target sequence.

        Shape:
            - x: ``(B, L, d_model)``
            - memory: ``(B, S, d_model)``
            - self_mask: broadcastable to ``(B, h, L, L)``
            - cross_mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` or ``memory`` is not a floating-point tensor, or
                a mask is not boolean.
            ValueError: If a shape does not fit.
        """
        check_decoder_inputs(self, x, memory, self_mask, cross_mask)
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, self_mask))
        x = self.add_norm2(x, lambda y: self.cross_attn(y, memory, memory, cross_mask))
        return self.add_norm3(x, self.feed_forward)


@contract
def check_encoder_inputs(
    module: nn.Module, x: object, mask: object, cache: object = None
) -> None:
    """Check the arguments of an encoder layer or stack: a sequence and its mask."""
    weight = next(module.parameters())
    check_sequence("x", x, module.d_model, "(B, L, d_model)", weight)
    B, L, _ = x.shape
    S = L + (0 if cache is None else cache.length)  # a stack's KVCache has one too
    if mask is not None:
        target = (B, module.h, L, S)
        check_mask("mask", mask, target, "(B, h, L, S)", device=x.device)


@contract
def check_decoder_inputs(
    module: nn.Module, x: object, memory: object, self_mask: object, cross_mask: object
) -> None:
    """Check the arguments of a decoder layer or stack: target, memory, two masks.

    ``cross_mask`` must be 4-D: a 2-D ``(B, S)`` padding mask would be read as
    ``(L, S)``, and silently so when ``B == L``.
    """
    weight = next(module.parameters())
    check_sequence("x", x, module.d_model, "(B, L, d_model)", weight)
    check_sequence("memory", memory, module.d_model, "(B, S, d_model)")
    (B, L, _), S, h = x.shape, memory.shape[1], module.h
    if memory.shape[0] != B:
        raise ValueError(
            f"memory must have shape (B, S, d_model) with B={B} as in x, "
            f"got shape {shape_str(memory.shape)}"
        )
    check_like("memory", memory, x, "x")
    if self_mask is not None:
        target = (B, h, L, L)
        check_mask("self_mask", self_mask, target, "(B, h, L, L)", device=x.device)
    if cross_mask is not None:
        target, where = (B, h, L, S), "(B, h, L, S)"
        check_mask(
            "cross_mask", cross_mask, target, where, device=x.device, batched=True
        )
