"""The checks of the attention modules: their sizes, and the inputs of a call."""

from __future__ import annotations

from .contract import contract
from .masks import check_attention_mask
from .tensors import (
    check_divisible,
    check_positive_int,
    check_probability,
    check_sequence,
    shape_str,
)


def check_attention_sizes(
    d_model: object,
    h: object,
    dropout: object,
    *,
    n_kv_heads: object = None,
    rope: object = None,
) -> None:
    """Check the sizes an attention module is built with.

    ``d_model`` and ``h`` are positive ints, ``h`` divides ``d_model``,
    ``dropout`` is in ``[0, 1)``, ``n_kv_heads``, if given, divides ``h``, and
    ``rope``, if given, turns heads of width ``d_model // h``.
    """
    check_positive_int("d_model", d_model)
    check_positive_int("h", h)
    check_divisible("d_model", d_model, "h", h)
    check_probability("dropout", dropout)
    if n_kv_heads is not None:
        check_positive_int("n_kv_heads", n_kv_heads)
        check_divisible("h", h, "n_kv_heads", n_kv_heads)
    check_rope(rope, d_model // h)


def cached_length(module: object) -> int:
    """The positions held by the KV cache attached to ``module``, or 0."""
    cache = getattr(module, "cache", None)
    return 0 if cache is None else cache.length


@contract
def check_attention_inputs(
    attn: object, query: object, key: object, value: object, mask: object
) -> None:
    """Check the arguments of an attention module's ``forward``.

    ``query`` is ``(B, L, d_model)``; ``key`` and ``value`` are
    ``(B, S, d_model)`` of its batch size, dtype and device; a mask broadcasts
    to ``(B, h, L, S)``, where ``S`` counts the cached positions too.
    """
    d_model, weight = attn.d_model, next(attn.parameters())
    check_sequence("query", query, d_model, "(B, L, d_model)", weight)
    check_sequence("key", key, d_model, "(B, S, d_model)")
    check_sequence("value", value, d_model, "(B, S, d_model)")
    (B, L, _), S = query.shape, key.shape[1] + cached_length(attn)
    if key.shape[0] != B or value.shape != key.shape:
        raise ValueError(
            f"key and value must have shape (B, S, d_model) with B={B} as in query, "
            f"got key {shape_str(key.shape)} and value {shape_str(value.shape)}"
        )
    if key.dtype != query.dtype or value.dtype != query.dtype:
        raise TypeError(
            f"key and value must have the dtype of query, {query.dtype}, "
            f"got {key.dtype} and {value.dtype}"
        )
    if key.device != query.device or value.device != query.device:
        raise ValueError(
            f"key and value must be on the device of query, {query.device}, "
            f"got {key.device} and {value.device}"
        )
    if getattr(attn, "rope", None) is not None and key is not query:
        raise ValueError(
            "an attention with rotary positions is self-attention: pass the same "
            "tensor as query, key and value"
        )
    if mask is not None:
        check_attention_mask(
            "mask", mask, (B, attn.h, L, S), "(B, h, L, S)", device=query.device
        )


def check_rope(rope: object, d_k: int) -> None:
    """Check that ``rope`` is ``None`` or a rotary embedding for heads of ``d_k``."""
    if rope is not None and getattr(rope, "d_k", None) != d_k:
        raise ValueError(f"rope must be a RotaryEmbedding with d_k={d_k}, got {rope!r}")
