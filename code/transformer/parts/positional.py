"""Positional information: attention alone cannot tell the order of its inputs.

Two ways to give every position its own vector, both added to the token
embeddings: the paper's fixed sinusoids and a learned table. Both return a
new tensor (the input is never modified in place) and apply dropout to the
sum, as the paper does.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.positions import check_positional_args, check_positional_input


def _add_positions(
    x: torch.Tensor, table: torch.Tensor, dropout: nn.Module, start: int = 0
) -> torch.Tensor:
    """Return ``dropout(x + table[start:start + L])``: rows of the position table."""
    L = x.shape[1]
    # (B, L, d_model)
    return dropout(x + table[start : start + L])


class SinusoidalPositionalEncoding(nn.Module):
    """Add the paper's fixed sine and cosine waves to a sequence of embeddings.

    Even dimension ``2i`` of position ``pos`` holds
    ``sin(pos / 10000^(2i / d_model))`` and odd dimension ``2i + 1`` the
    cosine of the same angle. The table is computed once, in float64, and
    kept in the default dtype as a buffer: it is not trained, moves with
    ``.to(device)``, and is left out of the ``state_dict`` because it can
    always be recomputed.

    Args:
        d_model: Width of the embeddings; must be even.
        max_len: Longest sequence the module accepts.
        dropout: Dropout probability applied to the sum, in training only.

    Attributes:
        pe: The encoding table, of shape ``(max_len, d_model)``.

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive, ``d_model`` is odd, or
            ``dropout`` is outside ``[0, 1)``.
    """

    pe: torch.Tensor

    def __init__(self, d_model: int, max_len: int, *, dropout: float = 0.0) -> None:
        check_positional_args(d_model, max_len, dropout, even=True)
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.dropout = nn.Dropout(dropout)
        # (max_len, 1)
        position = torch.arange(max_len, dtype=torch.float64)[:, None]
        # (d_model / 2,)
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
        # (max_len, d_model / 2)
        angle = position / 10000.0 ** (two_i / d_model)
        pe = torch.empty(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle)
        self.register_buffer("pe", pe.to(torch.get_default_dtype()), persistent=False)

    @entry
    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Return ``dropout(x + PE)`` for positions ``start`` to ``start + L - 1``.

        Args:
            x: Token embeddings.
            start: Position of the first token of ``x``, e.g. the number of
                tokens already in a KV cache.

        Returns:
            A new tensor; ``x`` is not modified.

        Shape:
            - x: ``(B, L, d_model)`` with ``start + L <= max_len``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``start``
                is not an int ``>= 0``.
            ValueError: If ``x`` has the wrong shape or ``start + L > max_len``.
        """
        check_positional_input(x, start, self.pe)
        return _add_positions(x, self.pe, self.dropout, start)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, max_len={self.max_len}"


class LearnedPositionalEmbedding(nn.Module):
    """Add a trained vector per position, looked up in a ``(max_len, d_model)`` table.

    The paper reports that learned positions work about as well as the
    sinusoids; they cannot, however, represent a position they never saw
    in training.

    Args:
        d_model: Width of the embeddings.
        max_len: Number of positions in the table; longest sequence accepted.
        dropout: Dropout probability applied to the sum, in training only.

    Attributes:
        weight: The trained table, an ``nn.Parameter`` of shape
            ``(max_len, d_model)``, initialised from ``N(0, 0.02²)``.

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive or ``dropout`` is outside
            ``[0, 1)``.
    """

    def __init__(self, d_model: int, max_len: int, *, dropout: float = 0.0) -> None:
        check_positional_args(d_model, max_len, dropout)
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.dropout = nn.Dropout(dropout)
        # Small next to the token embeddings, which have unit scale.
        self.weight = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    @entry
    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Return ``dropout(x + weight[start:start + L])``.

        Args:
            x: Token embeddings.
            start: Position of the first token of ``x``, e.g. the number of
                tokens already in a KV cache.

        Returns:
            A new tensor; ``x`` is not modified.

        Shape:
            - x: ``(B, L, d_model)`` with ``start + L <= max_len``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``start``
                is not an int ``>= 0``.
            ValueError: If ``x`` has the wrong shape or ``start + L > max_len``.
        """
        check_positional_input(x, start, self.weight)
        return _add_positions(x, self.weight, self.dropout, start)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, max_len={self.max_len}"
