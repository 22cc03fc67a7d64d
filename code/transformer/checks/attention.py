"""Checks of the inputs of attention: queries, keys and values that fit together.

:func:`check_attention` checks the arguments of
``transformer.parts.attention.scaled_dot_product_attention`` and
:func:`check_tiled_attention` those of ``transformer.parts.tiled_attention``.
"""

from __future__ import annotations

import torch

from .contract import contract
from .tensors import (
    check_like,
    check_mask,
    check_positive_int,
    check_probability,
    check_tensor,
    shape_str,
)


@contract
def check_attention(
    query: object, key: object, value: object, mask: object, dropout_p: object
) -> None:
    """Check the queries, keys and values of attention, and its mask and dropout.

    Queries ``(..., L, d_k)``, keys ``(..., S, d_k)`` and values
    ``(..., S, d_v)`` must be tensors of one dtype and device whose leading
    dimensions broadcast; ``mask``, if given, a boolean tensor that
    broadcasts to ``(..., L, S)``; and ``dropout_p`` a probability.

    Raises:
        TypeError: If an input is not a tensor, the dtypes differ, or
            ``mask`` is not boolean.
        ValueError: If the shapes do not fit together or ``dropout_p`` is
            outside ``[0, 1)``.
    """
    check_tensor("query", query, min_ndim=2, expected="(..., L, d_k)")
    check_tensor("key", key, min_ndim=2, expected="(..., S, d_k)")
    check_tensor("value", value, min_ndim=2, expected="(..., S, d_v)")
    check_probability("dropout_p", dropout_p)
    for name, x in (("key", key), ("value", value)):
        check_like(name, x, query, "query")
    if key.shape[-1] != query.shape[-1]:
        raise ValueError(
            "key must have the same last dimension d_k as query: expected (..., S, "
            f"{query.shape[-1]}), got key shape {shape_str(key.shape)}"
        )
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(
            "value must have one row per key position: expected "
            f"(..., {key.shape[-2]}, d_v), got value shape {shape_str(value.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(
            query.shape[:-2], key.shape[:-2], value.shape[:-2]
        )
    except RuntimeError:
        raise ValueError(
            "query, key and value must have broadcastable leading dimensions, got "
            f"shapes {shape_str(query.shape)}, {shape_str(key.shape)}, "
            f"{shape_str(value.shape)}"
        ) from None
    if mask is not None:
        L, S = query.shape[-2], key.shape[-2]
        check_mask("mask", mask, (*batch, L, S), "(..., L, S)", device=query.device)


@contract
def check_tiled_attention(
    query: object,
    key: object,
    value: object,
    mask: object,
    is_causal: object,
    block_size: object,
) -> None:
    """Check the arguments of tiled attention: those of :func:`check_attention`,
    a positive ``block_size``, and not both ``mask`` and ``is_causal``.

    Raises:
        TypeError: As :func:`check_attention`, or if ``block_size`` is not an int.
        ValueError: As :func:`check_attention`, if ``block_size`` is not
            positive, or if both ``mask`` and ``is_causal`` are given.
    """
    check_positive_int("block_size", block_size)
    if mask is not None and is_causal:
        raise ValueError("give either mask or is_causal=True, not both")
    check_attention(query, key, value, mask, 0.0)
