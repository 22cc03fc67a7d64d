"""Token embeddings: one learned ``d_model``-wide vector per vocabulary entry."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..checks.contract import entry
from ..checks.parts import check_embedding_args, check_embedding_input


class TokenEmbedding(nn.Module):
    """Look up each token's vector and scale it by ``sqrt(d_model)``.

    The paper multiplies the embeddings by ``sqrt(d_model)``. The table is
    initialised from ``N(0, 1 / d_model)`` so that the scaled vectors have
    unit variance per feature: the same order of size as the sinusoidal
    positional encoding added next, though about twice its mean square per
    feature (the token vector is about ``sqrt(2)`` times longer). When the
    table is shared with the output projection (weight tying), the unscaled
    table is what the projection uses.

    GPT-2 and LLaMA look their vectors up unscaled: ``scale=False``.

    Args:
        V: Vocabulary size.
        d_model: Width of the embeddings.
        scale: Multiply by ``sqrt(d_model)`` (the paper) or not.

    Attributes:
        weight: The table, an ``nn.Parameter`` of shape ``(V, d_model)``.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive.
    """

    def __init__(self, V: int, d_model: int, *, scale: bool = True) -> None:
        check_embedding_args(V, d_model, scale)
        super().__init__()
        self.V, self.d_model = V, d_model
        self.scale = math.sqrt(d_model) if scale else 1.0
        self.weight = nn.Parameter(torch.randn(V, d_model) / math.sqrt(d_model))

    @entry
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Return ``sqrt(d_model) * weight[ids]``, or ``weight[ids]`` unscaled.

        Args:
            ids: Integer token ids, each in ``[0, V)``.

        Returns:
            One scaled vector per token.

        Shape:
            - ids: ``(B, L)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``ids`` is not a tensor of integers.
            ValueError: If ``ids`` is not ``(B, L)``, is empty, or holds an id
                outside ``[0, V)``.
        """
        check_embedding_input(self, ids)
        # (B, L, d_model)
        return F.embedding(ids, self.weight) * self.scale

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"V={self.V}, d_model={self.d_model}, scale={self.scale:g}"
