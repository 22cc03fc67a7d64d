"""One encoder layer and one decoder layer: attention and feed-forward in Add & Norm."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.layers import (
    check_decoder_inputs,
    check_encoder_inputs,
    check_layer_options,
)
from ..parts.multihead import MultiHeadAttention
from ..parts.norm import AddNorm
from .choices import FEED_FORWARDS, NORMS

# The names a layer's options may take, for its check.
CHOICES = (tuple(FEED_FORWARDS), tuple(NORMS))


class EncoderLayer(nn.Module):
    """Let every position attend to every other, then transform each position.

    Two sublayers, each wrapped in :class:`~transformer.parts.norm.AddNorm`:
    multi-head self-attention, then the position-wise feed-forward network.
    The same ``dropout`` is used for the attention weights, the hidden
    feed-forward activations and both residual branches, as in PyTorch's
    ``nn.TransformerEncoderLayer``. Under a causal mask the same layer is a
    layer of a decoder-only model.

    Args:
        d_model: Width of the sequence.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward network.
        dropout: Dropout probability, in training only.
        activation: The nonlinearity of the feed-forward network: ``"relu"``
            (the paper), ``"gelu"`` or ``"gelu_tanh"``; ``"swiglu"`` builds
            the gated network instead
            (:data:`~transformer.models.choices.FEED_FORWARDS`).
        norm_first: ``False`` for post-norm (the paper), ``True`` for pre-norm.
        eps: The norms' ``eps``.
        norm: The norm, by name (:data:`~transformer.models.choices.NORMS`):
            ``"layer"`` (the paper) or ``"rms"``.
        self_attn: The self-attention module; ``None`` (the default) makes a
            :class:`~transformer.parts.multihead.MultiHeadAttention`.

    Attributes:
        self_attn: The self-attention; inside
            :func:`~transformer.tools.record.record_attention` its
            ``attn_weights`` hold the latest ``(B, h, L, L)`` weights.
        feed_forward: The feed-forward network.
        add_norm1: Residual and norm around the self-attention.
        add_norm2: Residual and norm around the feed-forward network.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or a name is unknown.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        *,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        norm: str = "layer",
        self_attn: nn.Module | None = None,
    ) -> None:
        check_layer_options(d_model, h, d_ff, activation, norm, CHOICES)
        super().__init__()
        self.d_model, self.h = d_model, h
        self.self_attn = self_attn or MultiHeadAttention(d_model, h, dropout=dropout)
        self.feed_forward = FEED_FORWARDS[activation](d_model, d_ff, dropout=dropout)
        options = {"dropout": dropout, "norm_first": norm_first}
        self.add_norm1 = AddNorm(d_model, norm=NORMS[norm](d_model, eps), **options)
        self.add_norm2 = AddNorm(d_model, norm=NORMS[norm](d_model, eps), **options)

    @entry
    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Run self-attention and the feed-forward network over ``x``.

        Args:
            x: The source sequence.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, L)``; typically a ``(B, 1, 1, L)`` padding mask.
                A 2-D mask is read as ``(L, L)``, the same for every sequence.
                A decoder-only model passes the
                :data:`~transformer.parts.masks.CAUSAL` marker instead (the
                type hint names only a tensor or ``None``).

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
        check_encoder_inputs(self, x, mask)
        x = self.add_norm1(x, lambda y: self.self_attn(y, y, y, mask))
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
        activation: The nonlinearity of the feed-forward network: ``"relu"``
            (the paper), ``"gelu"`` or ``"gelu_tanh"``; ``"swiglu"`` builds
            the gated network instead
            (:data:`~transformer.models.choices.FEED_FORWARDS`).
        norm_first: ``False`` for post-norm (the paper), ``True`` for pre-norm.
        eps: The norms' ``eps``.
        norm: The norm, by name: ``"layer"`` (the paper) or ``"rms"``.

    Attributes:
        self_attn: Self-attention over the target, weights ``(B, h, L, L)``.
        cross_attn: Attention from the target to ``memory``, weights
            ``(B, h, L, S)``.
        feed_forward: The feed-forward network.
        add_norm1: Residual and norm around the self-attention.
        add_norm2: Residual and norm around the cross-attention.
        add_norm3: Residual and norm around the feed-forward network.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or a name is unknown.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        *,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        norm: str = "layer",
    ) -> None:
        check_layer_options(d_model, h, d_ff, activation, norm, CHOICES)
        super().__init__()
        self.d_model, self.h = d_model, h
        self.self_attn = MultiHeadAttention(d_model, h, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, h, dropout=dropout)
        self.feed_forward = FEED_FORWARDS[activation](d_model, d_ff, dropout=dropout)
        options = {"dropout": dropout, "norm_first": norm_first}
        self.add_norm1 = AddNorm(d_model, norm=NORMS[norm](d_model, eps), **options)
        self.add_norm2 = AddNorm(d_model, norm=NORMS[norm](d_model, eps), **options)
        self.add_norm3 = AddNorm(d_model, norm=NORMS[norm](d_model, eps), **options)

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
                :func:`~transformer.parts.masks.causal_mask`, possibly combined
                with target padding, or the
                :data:`~transformer.parts.masks.CAUSAL` marker, which the
                model passes when it is given no target mask (the type hint
                names only a tensor or ``None``).
                ``None`` lets every position see every other.
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
