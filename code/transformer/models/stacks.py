"""Stacks of ``N`` identical layers: the encoder and the decoder."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.tensors import check_positive_int
from ..parts.kv_cache import KVCache
from ..parts.norm import NORMS
from .layers import (
    DecoderLayer,
    EncoderLayer,
    check_decoder_inputs,
    check_encoder_inputs,
)


class _Stack(nn.Module):
    """``N`` layers of one kind and an optional final norm; see :class:`Encoder`."""

    layer_kind: type[EncoderLayer] | type[DecoderLayer]

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        N: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
        final_norm: bool | None = None,
        eps: float = 1e-5,
        *,
        norm: str = "layer",
        **attention: object,
    ) -> None:
        super().__init__()
        check_positive_int("N", N)
        self.d_model, self.h = d_model, h
        args = (d_model, h, d_ff, dropout, activation, norm_first, eps)
        self.layers = nn.ModuleList(
            self.layer_kind(*args, norm=norm, **attention) for _ in range(N)
        )
        if final_norm is not None and not isinstance(final_norm, bool):
            raise TypeError(
                f"final_norm must be a bool or None, got {type(final_norm).__name__}"
            )
        # A pre-norm stack leaves its output unnormalised; a post-norm one ends in a
        # norm.
        wanted = norm_first if final_norm is None else final_norm
        self.norm = NORMS[norm](d_model, eps) if wanted else None


class Encoder(_Stack):
    """Pass the source through ``N`` :class:`~transformer.models.layers.EncoderLayer` in
    turn.

    Args:
        d_model: Width of the sequences.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward networks.
        N: Number of layers (6 in the paper).
        dropout: Dropout probability, in training only.
        activation: ``"relu"``, ``"gelu"`` or ``"swiglu"``.
        norm_first: ``False`` for post-norm layers (the paper), ``True`` for pre-norm.
        final_norm: Whether a :class:`~transformer.parts.norm.LayerNorm` follows the
            last layer. ``None`` (the default) means "when ``norm_first``":
            a pre-norm stack leaves its output unnormalised and needs one,
            while a post-norm stack already ends in a norm.
        eps: The norms' ``eps``.
        norm: ``"layer"`` (the paper) or ``"rms"``, in the layers and at the end.
        **attention: For an encoder stack, ``n_kv_heads`` and ``rope`` of its
            :class:`~transformer.models.layers.EncoderLayer` layers.

    Attributes:
        layers: The ``N`` layers, an ``nn.ModuleList``.
        norm: The final norm, or ``None``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or ``activation`` is
            unknown.
    """

    layer_kind = EncoderLayer

    @entry
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """Encode ``x`` with every layer in turn, then the final norm if any.

        Args:
            x: The embedded source sequence.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, S, S)``; typically the ``(B, 1, 1, S)`` padding mask.
                A 2-D mask is read as ``(S, S)``, the same for every sequence.
            cache: One KV cache per layer, in a decoder-only model that
                generates; the mask then also covers the cached positions.

        Returns:
            The memory that the decoder attends to.

        Shape:
            - x: ``(B, S, d_model)``
            - mask: broadcastable to ``(B, h, S, S)``
            - output: ``(B, S, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``mask`` is
                not boolean.
            ValueError: If ``x`` or ``mask`` has the wrong shape.
        """
        check_encoder_inputs(self, x, mask, cache)
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, cache=None if cache is None else cache[i])
        return x if self.norm is None else self.norm(x)


class Decoder(_Stack):
    """Pass the target through ``N`` :class:`~transformer.models.layers.DecoderLayer`
    in turn.

    Args:
        d_model: Width of the sequences.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward networks.
        N: Number of layers (6 in the paper).
        dropout: Dropout probability, in training only.
        activation: ``"relu"``, ``"gelu"`` or ``"swiglu"``.
        norm_first: ``False`` for post-norm layers (the paper), ``True`` for pre-norm.
        final_norm: Whether a :class:`~transformer.parts.norm.LayerNorm` follows the
            last layer. ``None`` (the default) means "when ``norm_first``":
            a pre-norm stack leaves its output unnormalised and needs one,
            while a post-norm stack already ends in a norm.
        eps: The norms' ``eps``.
        norm: ``"layer"`` (the paper) or ``"rms"``, in the layers and at the end.
        **attention: For an encoder stack, ``n_kv_heads`` and ``rope`` of its
            :class:`~transformer.models.layers.EncoderLayer` layers.

    Attributes:
        layers: The ``N`` layers, an ``nn.ModuleList``.
        norm: The final norm, or ``None``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``dropout`` is outside ``[0, 1)`` or ``activation`` is
            unknown.
    """

    layer_kind = DecoderLayer

    @entry
    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        cross_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Decode ``x`` against ``memory`` with every layer, then the final norm if any.

        Args:
            x: The embedded target sequence.
            memory: The encoder's output.
            self_mask: Optional boolean mask over the target, ``True`` = may
                attend, broadcastable to ``(B, h, L, L)``; usually causal.
            cross_mask: Optional boolean mask over the source, ``True`` = may
                attend, broadcastable to ``(B, h, L, S)``; 4-D, e.g.
                ``(B, 1, 1, S)``.

        Returns:
            The decoded target sequence, before the output projection.

        Shape:
            - x: ``(B, L, d_model)``
            - memory: ``(B, S, d_model)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If an input is not a floating-point tensor or a mask is
                not boolean.
            ValueError: If a shape does not fit.
        """
        check_decoder_inputs(self, x, memory, self_mask, cross_mask)
        for layer in self.layers:
            x = layer(x, memory, self_mask, cross_mask)
        return x if self.norm is None else self.norm(x)
