"""Attention one tile at a time, with an online softmax: FlashAttention's idea."""

from __future__ import annotations

import math

import torch

from ..checks.attention import check_tiled_attention
from ..checks.contract import entry


@entry
def tiled_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    is_causal: bool = False,
    block_size: int = 64,
) -> torch.Tensor:
    """Compute softmax(Q Kᵀ / √d_k) V block by block, never holding all the scores.

    The queries are cut into blocks of ``block_size`` rows. Each query block
    walks over the keys in blocks of ``block_size`` and keeps, per query, a
    running maximum of its scores, a running sum of their exponentials and a
    running weighted sum of the values; when a larger score arrives, what was
    summed so far is rescaled. The result equals
    ``torch.nn.functional.scaled_dot_product_attention`` with the same
    ``attn_mask`` and ``is_causal``, gradients included, except on a query
    whose mask row is all ``False``: it gets a zero output here, and what
    PyTorch gives it depends on its version (the masking chapter shows the
    version that built the book). The largest score tensor is
    ``block_size × block_size`` per batch and head.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        mask: Optional boolean mask, ``True`` = may attend, broadcastable to
            ``(..., L, S)``. A query whose row is entirely ``False`` gets a
            zero output, as in
            :func:`~transformer.parts.attention.scaled_dot_product_attention`.
        is_causal: Let query ``i`` attend to keys ``j <= i`` only (aligned at
            the top left when ``L != S``, as PyTorch does). Not together with
            ``mask``.
        block_size: Rows of queries and of keys per tile.

    Returns:
        The output only; no weights are ever formed.

    Shape:
        - query: ``(..., L, d_k)``
        - key: ``(..., S, d_k)``
        - value: ``(..., S, d_v)``
        - mask: broadcastable to ``(..., L, S)``
        - output: ``(..., L, d_v)``

    Raises:
        TypeError: If an input is not a tensor, the dtypes differ, ``mask``
            is not boolean, or ``block_size`` is not an int.
        ValueError: If the shapes do not fit, ``block_size`` is not positive,
            or both ``mask`` and ``is_causal`` are given.
    """
    check_tiled_attention(query, key, value, mask, is_causal, block_size)
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    L, S, d_k = query.shape[-2], key.shape[-2], query.shape[-1]
    if mask is not None:
        # (..., L, S), a view: nothing is copied
        mask = mask.expand(*batch, L, S)
    scale = 1.0 / math.sqrt(d_k)
    outputs = []
    for q0 in range(0, L, block_size):
        # (..., bq, d_k)
        q = query[..., q0 : q0 + block_size, :] * scale
        rows = q.shape[-2]
        # (..., bq, 1)
        running_max = q.new_full((*batch, rows, 1), float("-inf"))
        # (..., bq, 1)
        running_sum = q.new_zeros((*batch, rows, 1))
        # (..., bq, d_v)
        acc = q.new_zeros((*batch, rows, value.shape[-1]))
        for k0 in range(0, S, block_size):
            # Every key from here on lies in every query's future.
            if is_causal and k0 > q0 + rows - 1:
                break
            # (..., bk, d_k)
            k = key[..., k0 : k0 + block_size, :]
            # (..., bq, bk)
            scores = q @ k.transpose(-2, -1)
            if mask is not None:
                scores = scores.masked_fill(
                    ~mask[..., q0 : q0 + rows, k0 : k0 + k.shape[-2]], -math.inf
                )
            elif is_causal:
                # (bq, 1)
                i = torch.arange(q0, q0 + rows, device=q.device)[:, None]
                # (bk,)
                j = torch.arange(k0, k0 + k.shape[-2], device=q.device)
                scores = scores.masked_fill(j > i, -math.inf)
            # The shift does not change the softmax, so it needs no gradient.
            new_max = torch.maximum(
                running_max, scores.detach().amax(dim=-1, keepdim=True)
            )
            # No key seen yet: shift by 0, not by -inf, which would give NaN.
            shift = new_max.masked_fill(new_max == -math.inf, 0.0)
            # (..., bq, bk)
            p = torch.exp(scores - shift)
            # (..., bq, 1)
            rescale = torch.exp(running_max - shift)
            running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
            # (..., bq, d_v)
            acc = acc * rescale + p @ value[..., k0 : k0 + block_size, :]
            running_max = new_max
        # A fully masked row has acc = 0 and running_sum = 0: its output is 0.
        outputs.append(acc / running_sum.masked_fill(running_sum == 0, 1.0))
    # (..., L, d_v)
    return torch.cat(outputs, dim=-2)
