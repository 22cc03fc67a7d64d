"""Stacks of ``N`` layers: the encoder, the decoder, and a decoder-only model's."""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.layers import (
    check_decoder_inputs,
    check_encoder_inputs,
    check_stack_options,
)
from .choices import NORMS
from .layers import DecoderLayer, EncoderLayer


class LayerStack(nn.Module):
    """``N`` layers and the norm after the last one; the stacks below add ``forward``.

    Args:
        layers: The layers, run in turn.
        norm: The final norm; ``nn.Identity()`` for none.

    Attributes:
        layers: The layers, an ``nn.ModuleList``.
        norm: The final norm, ``nn.Identity()`` when there is none.
    """

    def __init__(self, layers: Iterable[nn.Module], norm: nn.Module) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm
        first = self.layers[0]
        self.d_model, self.h = first.d_model, first.h


class Encoder(LayerStack):
    """Pass the source through ``N`` encoder layers in turn, then the final norm.

    Args:
        d_model: Width of the sequences.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward networks.
        N: Number of layers (6 in the paper).
        final_norm: Whether a norm follows the last layer. ``None`` (the
            default) means "when ``norm_first``": a pre-norm stack leaves its
            output unnormalised and needs one, while a post-norm stack
            already ends in a norm.
        **options: The options of every
            :class:`~transformer.models.layers.EncoderLayer`: ``dropout``,
            ``activation``, ``norm_first``, ``eps``, ``norm``.

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
        N: int,
        *,
        final_norm: bool | None = None,
        **options: object,
    ) -> None:
        check_stack_options(N, final_norm)
        layers = [EncoderLayer(d_model, h, d_ff, **options) for _ in range(N)]
        super().__init__(layers, stack_norm(d_model, options, wanted=final_norm))

    @entry
    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Encode ``x`` with every layer in turn, then the final norm.

        Args:
            x: The embedded source sequence.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, S, S)``; typically the ``(B, 1, 1, S)`` padding mask.
                A 2-D mask is read as ``(S, S)``, the same for every sequence.

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
        check_encoder_inputs(self, x, mask)
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class Decoder(LayerStack):
    """Pass the target through ``N`` decoder layers in turn, then the final norm.

    Args:
        d_model: Width of the sequences.
        h: Number of attention heads; must divide ``d_model``.
        d_ff: Hidden width of the feed-forward networks.
        N: Number of layers (6 in the paper).
        final_norm: Whether a norm follows the last layer; ``None`` means
            "when ``norm_first``", as for :class:`Encoder`.
        **options: The options of every
            :class:`~transformer.models.layers.DecoderLayer`: ``dropout``,
            ``activation``, ``norm_first``, ``eps``, ``norm``.

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
        N: int,
        *,
        final_norm: bool | None = None,
        **options: object,
    ) -> None:
        check_stack_options(N, final_norm)
        layers = [DecoderLayer(d_model, h, d_ff, **options) for _ in range(N)]
        super().__init__(layers, stack_norm(d_model, options, wanted=final_norm))

    @entry
    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        cross_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Decode ``x`` against ``memory`` with every layer, then the final norm.

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
        return self.norm(x)


class DecoderOnlyStack(LayerStack):
    """The ``N`` layers of a decoder-only model, then its final norm.

    Each layer is an :class:`~transformer.models.layers.EncoderLayer`:
    self-attention and a feed-forward network, with no memory to attend to.
    The model's causal mask is what makes the stack a decoder. The model
    builds the layers from its config and checks its inputs itself.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Run every layer under ``mask``, then the final norm.

        Shape:
            - x: ``(B, L, d_model)``; mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, d_model)``
        """
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


def stack_norm(d_model: int, options: dict, *, wanted: bool | None = None) -> nn.Module:
    """The final norm of a stack built with the layer ``options``: by default,
    a norm when the layers are pre-norm, none when they are post-norm."""
    norm_first = options.get("norm_first", False)
    wanted = norm_first if wanted is None else wanted
    norm, eps = options.get("norm", "layer"), options.get("eps", 1e-5)
    return NORMS[norm](d_model, eps) if wanted else nn.Identity()
