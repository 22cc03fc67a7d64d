"""Rotary position embeddings (RoPE): positions as rotations of queries and keys."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import contract, entry
from ..checks.tensors import (
    check_positive_float,
    check_positive_int,
    check_tensor,
    shape_str,
)


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
        base: The wavelength scale (10000 in RoPE and LLaMA).

    Attributes:
        cos: Cosines of the angles, of shape ``(max_len, d_k / 2)``.
        sin: Sines of the angles, of shape ``(max_len, d_k / 2)``.

    Raises:
        TypeError: If a size is not an int or ``base`` not a number.
        ValueError: If a size or ``base`` is not positive, or ``d_k`` is odd.
    """

    cos: torch.Tensor
    sin: torch.Tensor

    def __init__(self, d_k: int, max_len: int, base: float = 10000.0) -> None:
        super().__init__()
        self.d_k = check_positive_int("d_k", d_k)
        self.max_len = check_positive_int("max_len", max_len)
        self.base = check_positive_float("base", base)
        if d_k % 2:
            raise ValueError(f"d_k must be even (features turn in pairs), got {d_k}")
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
        _check_rotary(self, x, offset)
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


@contract
def _check_rotary(rope: RotaryEmbedding, x: object, offset: object) -> None:
    """Check the arguments of :meth:`RotaryEmbedding.forward`."""
    check_tensor("x", x, ndim=4, expected="(B, h, L, d_k)")
    if not x.dtype.is_floating_point or x.shape[-1] != rope.d_k:
        raise ValueError(
            f"x must be a floating-point tensor of shape (B, h, L, d_k) with "
            f"d_k={rope.d_k}, got {x.dtype} of shape {shape_str(x.shape)}"
        )
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an int, got {type(offset).__name__}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    L = x.shape[2]
    if offset + L > rope.max_len:
        raise ValueError(
            f"positions offset + L = {offset} + {L} run past max_len={rope.max_len}: "
            f"x has shape {shape_str(x.shape)}; build the module with a larger max_len"
        )


class EmbeddingDropout(nn.Module):
    """Dropout on the embeddings, and no positions: a model with rotary positions
    turns its queries and keys instead (:class:`RotaryEmbedding`)."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Return ``dropout(x)``; ``start`` is ignored."""
        return self.dropout(x)
