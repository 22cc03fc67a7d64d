"""Scaled dot-product attention, the one operation every other module builds on."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..checks.attention import check_attention
from ..checks.contract import entry
from .masks import CAUSAL, CausalMask, mask_tensor


@entry
def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Compute softmax(Q Kᵀ / √d_k) V and return the output with its weights.

    Args:
        query: Queries, one row per position that asks.
        key: Keys, one row per position that can be looked at.
        value: Values, one row per key position.
        mask: Optional boolean mask, ``True`` = may attend, ``False`` =
            blocked. It must broadcast to ``(..., L, S)``. A query whose row
            is entirely ``False`` gets zero weights and a zero output, never
            NaN.
        dropout_p: Probability of zeroing an attention weight. Applied
            whenever it is positive, so pass ``0.0`` in evaluation.

    Returns:
        A pair ``(output, weights)``.

    Shape:
        - query: ``(..., L, d_k)``
        - key: ``(..., S, d_k)``
        - value: ``(..., S, d_v)``
        - mask: broadcastable to ``(..., L, S)``
        - output: ``(..., L, d_v)``
        - weights: ``(..., L, S)``; each row sums to one, or to zero when
          fully masked.

    Raises:
        TypeError: If an input is not a tensor, the dtypes differ, or
            ``mask`` is not boolean.
        ValueError: If the shapes do not fit together.
    """
    check_attention(query, key, value, mask, dropout_p)
    d_k = query.shape[-1]
    # (..., L, S)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        # A row with no key to look at would be softmax(all -inf) = NaN.
        # Give it finite scores here and zero weights below.
        scores = scores.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    # (..., L, S)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    # (..., L, d_v)
    output = weights @ value
    return output, weights


def fused_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | CausalMask | None = None,
    dropout_p: float = 0.0,
) -> torch.Tensor:
    """Compute what :func:`scaled_dot_product_attention` computes, in PyTorch's kernel.

    ``F.scaled_dot_product_attention`` fuses the scores, the softmax and the
    weighted sum, and keeps no ``(L, S)`` weights. A query whose mask row is
    all ``False`` gets a zero output here, as in the package's function;
    what PyTorch gives such a row depends on its version (the masking
    chapter shows the version that built the book). The attention modules
    call this after checking their inputs; it does not check them again.

    :data:`~transformer.parts.masks.CAUSAL` reaches PyTorch as
    ``is_causal=True`` (``L == S``) or as no mask (``L == 1``), so that its
    flash kernels run and no ``(L, S)`` mask is built; otherwise it is built.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        mask: Optional boolean mask, ``True`` = may attend, or ``CAUSAL``.
        dropout_p: Probability of zeroing an attention weight.

    Returns:
        The output, without the weights.

    Shape:
        - query: ``(B, h, L, d_k)``; key, value: ``(B, h, S, d_k)``
        - mask: broadcastable to ``(B, h, L, S)``
        - output: ``(B, h, L, d_k)``
    """
    L, S = query.shape[-2], key.shape[-2]
    if mask is CAUSAL and L == S:
        return F.scaled_dot_product_attention(
            query, key, value, dropout_p=dropout_p, is_causal=True
        )
    # one query after S - 1 earlier positions may see them all: no mask
    mask = (
        None
        if mask is CAUSAL and L == 1
        else mask_tensor(mask, L, S, device=query.device)
    )
    if mask is None:
        return F.scaled_dot_product_attention(query, key, value, dropout_p=dropout_p)
    # (..., L, 1): a query that may attend nowhere attends everywhere, then gets 0
    blocked = ~mask.any(dim=-1, keepdim=True)
    out = F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask | blocked, dropout_p=dropout_p
    )
    return out.masked_fill(blocked, 0.0)
