"""Rotary position embeddings (RoPE): positions as rotations of queries and keys."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.positions import (
    check_dropout_input,
    check_rotary_args,
    check_rotary_input,
)
from ..checks.tensors import check_probability


class RotaryEmbedding(nn.Module):
    """Rotate each pair of features of a query or key by an angle set by its position.

    Feature pair ``(2i, 2i + 1)`` of position ``m`` turns by the angle
    ``m * base^(-2i / d_k)`` (Su et al., 2021). A rotation keeps lengths, and
    the dot product of a query rotated to position ``m`` with a key rotated
    to position ``n`` depends on ``m - n`` only: attention scores see relative
    positions. Nothing is added to the embeddings, and there is nothing to
    train. The cosines and sines are computed once and kept in float64, as
    buffers that are left out of the ``state_dict``.

    Args:
        d_k: Width of one head's queries and keys; must be even.
        max_len: Number of positions the tables cover.
        base: The wavelength scale; the RoPE paper and LLaMA 1 and 2 use
            10000, LLaMA 3 uses 500000.

    Attributes:
        cos: Cosines of the angles, of shape ``(max_len, d_k / 2)``.
        sin: Sines of the angles, of shape ``(max_len, d_k / 2)``.

    Raises:
        TypeError: If a size is not an int or ``base`` not a number.
        ValueError: If a size or ``base`` is not positive, or ``d_k`` is odd.
    """

    cos: torch.Tensor
    sin: torch.Tensor

    def __init__(self, d_k: int, max_len: int, *, base: float = 10000.0) -> None:
        check_rotary_args(d_k, max_len, base)
        super().__init__()
        self.d_k, self.max_len, self.base = d_k, max_len, float(base)
        # (max_len, 1)
        position = torch.arange(max_len, dtype=torch.float64)[:, None]
        # (d_k / 2,)
        two_i = torch.arange(0, d_k, 2, dtype=torch.float64)
        # (max_len, d_k / 2)
        angle = position * base ** (-two_i / d_k)
        # Kept in float64: each call rounds them once, to the dtype of its input.
        self.register_buffer("cos", torch.cos(angle), persistent=False)
        self.register_buffer("sin", torch.sin(angle), persistent=False)
        self._rounded: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}

    @entry
    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Return ``x`` with position ``offset + t`` applied to row ``t``.

        Args:
            x: Queries or keys of every head.
            offset: Position of the first row, e.g. the number of tokens
                already in a KV cache.

        Returns:
            A new tensor; ``x`` is not modified.

        Shape:
            - x: ``(B, h, L, d_k)`` with ``offset + L <= max_len``
            - output: ``(B, h, L, d_k)``

        Raises:
            TypeError: If ``x`` is not a tensor or ``offset`` not an int.
            ValueError: If ``x`` is not a floating-point ``(B, h, L, d_k)``,
                ``offset`` is negative, or the positions run past ``max_len``.
        """
        check_rotary_input(self, x, offset)
        L = x.shape[2]
        # (L, d_k / 2) each
        cos, sin = self._tables(x)[:, offset : offset + L]
        # (B, h, L, d_k / 2) each
        even, odd = x[..., 0::2], x[..., 1::2]
        turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
        # (B, h, L, d_k)
        return turned.flatten(-2)

    def _tables(self, x: torch.Tensor) -> torch.Tensor:
        """Return cos and sin rounded once to the dtype and device of ``x``."""
        key = (x.dtype, x.device)
        if key not in self._rounded:
            # (2, ...)
            self._rounded[key] = torch.stack([self.cos, self.sin]).to(x)
        return self._rounded[key]

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_k={self.d_k}, max_len={self.max_len}, base={self.base}"


class EmbeddingDropout(nn.Module):
    """Apply dropout to the embeddings and add no positions: those of a rotary model.

    A model with rotary positions turns its queries and keys inside attention
    and adds nothing to its token embeddings, only the dropout that the other
    positional modules apply to their sum. This module takes their place, with
    their call ``positional(x, start)``, so that a model calls its positional
    module the same way whatever the kind.

    Args:
        dropout: Dropout probability, in training only.

    Raises:
        TypeError: If ``dropout`` is not a number.
        ValueError: If ``dropout`` is outside ``[0, 1)``.
    """

    def __init__(self, dropout: float = 0.0) -> None:
        check_probability("dropout", dropout)
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    @entry
    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Return ``dropout(x)``; ``start`` is accepted and ignored.

        Args:
            x: Token embeddings.
            start: Position of the first token of ``x``; rotary positions are
                applied later, to the queries and keys.

        Returns:
            A new tensor in training, ``x`` itself in evaluation.

        Shape:
            - x: ``(B, L, d_model)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``start``
                is not an int ``>= 0``.
            ValueError: If ``x`` is not three-dimensional or is empty.
        """
        check_dropout_input(x, start)
        return self.dropout(x)
