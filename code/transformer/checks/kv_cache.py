"""Checks of what a layer's KV cache is given: new keys and values that fit it."""

from __future__ import annotations

from .tensors import check_tensor, shape_str


def check_layer_cache_update(cache: object, key: object, value: object) -> None:
    """Check that new keys and values fit each other and the cached ones."""
    check_tensor("key", key, ndim=4, expected="(B, n_kv_heads, L, d_k)")
    if value.shape != key.shape:
        raise ValueError(
            f"value must have the shape of key, {shape_str(key.shape)}, "
            f"got {shape_str(value.shape)}"
        )
    held = cache.keys
    if held is not None and (
        key.shape[:2] != held.shape[:2] or key.shape[3] != held.shape[3]
    ):
        raise ValueError(
            f"key must be (B, n_kv_heads, L, d_k) = "
            f"{shape_str(held.shape[:2])} + (L, {held.shape[3]}) like "
            f"the cache, got {shape_str(key.shape)}"
        )
