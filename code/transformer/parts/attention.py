"""Scaled dot-product attention, the one operation every other module builds on."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..checks.attention import check_attention
from ..checks.contract import entry


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


def _attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None,
    dropout_p: float,
    need_weights: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attend from ``h`` query heads to ``h`` or fewer key/value heads.

    Without weights, PyTorch's fused ``F.scaled_dot_product_attention``
    computes the output and no ``(L, S)`` matrix is kept. With weights, the
    package's own :func:`~transformer.parts.attention.scaled_dot_product_attention`
    runs instead. A query whose mask row is all ``False`` gets a zero output
    on both paths.

    This is the inside of the attention modules, called after their inputs
    were checked; it does not check them again.

    Args:
        q: Queries of ``h`` heads.
        k: Keys of ``h_kv`` heads.
        v: Values of ``h_kv`` heads.
        mask: Optional boolean mask, ``True`` = may attend.
        dropout_p: Probability of zeroing an attention weight.
        need_weights: Return the weights too, through the package's own function.

    Returns:
        A pair ``(output, weights)``; ``weights`` is ``None`` on the fast path.

    Shape:
        - q: ``(B, h, L, d_k)``
        - k, v: ``(B, h_kv, S, d_k)``, ``h_kv`` dividing ``h``
        - mask: broadcastable to ``(B, h, L, S)``
        - output: ``(B, h, L, d_k)``, and weights ``(B, h, L, S)`` or ``None``
    """
    if need_weights:
        group = q.shape[1] // k.shape[1]
        # (B, h, S, d_k)
        k = k.repeat_interleave(group, dim=1)
        # (B, h, S, d_k)
        v = v.repeat_interleave(group, dim=1)
        return scaled_dot_product_attention(q, k, v, mask, dropout_p)
    if mask is None:
        out = F.scaled_dot_product_attention(
            q, k, v, dropout_p=dropout_p, enable_gqa=True
        )
        return out, None
    # A fully masked row may attend anywhere here; its output is zeroed below.
    # (..., L, 1)
    blocked = ~mask.any(dim=-1, keepdim=True)
    # (B, h, L, d_k)
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask | blocked, dropout_p=dropout_p, enable_gqa=True
    )
    return out.masked_fill(blocked, 0.0), None
