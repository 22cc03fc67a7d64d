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


FLASH_HEAD_WIDTHS = (16, 32, 64, 128)
FLASH_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@contract
def check_flash_attention(
    query: object, key: object, value: object, is_causal: object, block_size: object
) -> None:
    """Check the arguments of the Triton kernel: queries ``(B, h, L, d)``, keys
    and values ``(B, h_kv, S, d)`` with ``h_kv`` dividing ``h``, ``d`` in
    ``FLASH_HEAD_WIDTHS``, one float dtype of ``FLASH_DTYPES`` and one device
    (the CPU, under Triton's interpreter, or CUDA; bfloat16 on CUDA only), and
    a power-of-two ``block_size`` of at least 16.

    Raises:
        TypeError: If an input is not a tensor, the dtypes differ or are not
            supported, ``is_causal`` is not a bool or ``block_size`` not an int.
        ValueError: If the shapes do not fit, the head width or the block size
            is not supported, or the tensors are on another device.
    """
    check_tensor("query", query, ndim=4, expected="(B, h, L, d)")
    check_tensor("key", key, ndim=4, expected="(B, h_kv, S, d)")
    check_tensor("value", value, ndim=4, expected="(B, h_kv, S, d)")
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be a bool, got {type(is_causal).__name__}")
    check_positive_int("block_size", block_size)
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError(
            f"block_size must be a power of two, at least 16, got {block_size}"
        )
    if query.dtype not in FLASH_DTYPES:
        raise TypeError(
            "query must be float32, float16 or bfloat16, got "
            f"{str(query.dtype).removeprefix('torch.')}"
        )
    for name, x in (("key", key), ("value", value)):
        check_like(name, x, query, "query")
    if query.device.type == "cpu" and query.dtype == torch.bfloat16:
        raise TypeError(
            "query must be float32 or float16 on the CPU, got bfloat16: Triton's "
            "interpreter does not multiply bfloat16 matrices; use a CUDA GPU"
        )
    if query.device.type not in ("cpu", "cuda"):
        raise ValueError(f"query must be on the CPU or a CUDA GPU, got {query.device}")
    B, h, L, d = query.shape
    if d not in FLASH_HEAD_WIDTHS:
        raise ValueError(
            f"query's head width d must be one of {FLASH_HEAD_WIDTHS}: expected "
            f"(B, h, L, d), got query shape {shape_str(query.shape)}"
        )
    h_kv = key.shape[1]
    if key.shape[0] != B or key.shape[3] != d or h % h_kv:
        raise ValueError(
            f"key must be (B, h_kv, S, d) with B = {B}, d = {d} and h_kv dividing "
            f"h = {h}, got key shape {shape_str(key.shape)}"
        )
    if value.shape != key.shape:
        raise ValueError(
            f"value must have key's shape {shape_str(key.shape)}, "
            f"got value shape {shape_str(value.shape)}"
        )
