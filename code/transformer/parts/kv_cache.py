"""The KV cache: keys and values of the tokens already seen, kept for the next step."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.tensors import check_tensor, shape_str


class LayerKVCache:
    """The keys and values of one attention layer, grown by one step at a time.

    Attributes:
        key: The cached keys, ``(B, n_kv_heads, T, d_k)``, or ``None`` while empty.
        value: The cached values, ``(B, n_kv_heads, T, d_k)``, or ``None``.
    """

    def __init__(self) -> None:
        self.key: torch.Tensor | None = None
        self.value: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """The number of positions ``T`` held."""
        return 0 if self.key is None else self.key.shape[-2]

    def update(
        self, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new positions' keys and values and return all of them.

        Args:
            key: Keys of the new positions.
            value: Values of the new positions.

        Returns:
            The keys and values of every position so far, old then new.

        Shape:
            - key, value: ``(B, n_kv_heads, L, d_k)``
            - output: two tensors ``(B, n_kv_heads, T + L, d_k)``

        Raises:
            ValueError: If the new keys do not fit the cached ones.
        """
        check_tensor("key", key, ndim=4, expected="(B, n_kv_heads, L, d_k)")
        if value.shape != key.shape:
            raise ValueError(
                f"value must have the shape of key, {shape_str(key.shape)}, "
                f"got {shape_str(value.shape)}"
            )
        if self.key is not None:
            if key.shape[:2] != self.key.shape[:2] or key.shape[3] != self.key.shape[3]:
                raise ValueError(
                    f"key must be (B, n_kv_heads, L, d_k) = "
                    f"{shape_str(self.key.shape[:2])} + (L, {self.key.shape[3]}) like "
                    f"the cache, got {shape_str(key.shape)}"
                )
            # (B, n_kv_heads, T + L, d_k)
            key = torch.cat([self.key, key], dim=-2)
            # (B, n_kv_heads, T + L, d_k)
            value = torch.cat([self.value, value], dim=-2)
        self.key, self.value = key, value
        return key, value


class KVCache:
    """The keys and values of every attention layer of a decoder-only model.

    Calling the cache with new token ids runs the model over them: each
    attention layer that can hold a cache (it has a ``cache`` attribute, as
    :class:`~transformer.parts.gqa.GroupedQueryAttention` does) gets its
    :class:`LayerKVCache` for the call, computes keys and values for the new
    tokens only, appends them, and attends over everything cached. The new
    tokens take the positions after the cached ones.
    :func:`~transformer.inference.generate.generate` does this for you.

    Args:
        model: A decoder-only model whose attention layers can hold a cache.

    Raises:
        TypeError: If ``model`` has no attention layer that can hold a cache.

    Example::

        cache = KVCache(model)
        logits = cache(prompt)  # (B, L, V); the cache now holds L positions
        logits = cache(next_ids)  # (B, 1, V), at position L
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.attentions = check_cacheable(model)
        self.layers = [LayerKVCache() for _ in self.attentions]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Run the model over the new tokens ``x`` and return their logits.

        Shape:
            - x: ``(B, L)``, the tokens after the ``T`` cached ones
            - output: ``(B, L, V)``
        """
        for attn, layer in zip(self.attentions, self.layers):
            attn.cache = layer
        try:
            return self.model(x, start=self.length)
        finally:
            for attn in self.attentions:
                attn.cache = None

    def __getitem__(self, i: int) -> LayerKVCache:
        """Return the cache of attention layer ``i``."""
        return self.layers[i]

    def __len__(self) -> int:
        """Return the number of attention layers."""
        return len(self.layers)

    @property
    def length(self) -> int:
        """The number of positions cached, the position of the next token."""
        return self.layers[0].length

    @property
    def nbytes(self) -> int:
        """The memory the cached keys and values take, in bytes."""
        return sum(
            t.numel() * t.element_size()
            for layer in self.layers
            for t in (layer.key, layer.value)
            if t is not None
        )


def check_cacheable(model: object) -> list[nn.Module]:
    """Return the attention layers of ``model`` that can hold a cache, or raise."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    found = [m for m in model.modules() if hasattr(m, "cache") and m is not model]
    if not found:
        raise TypeError(
            f"model must have attention layers that can hold a KV cache "
            f"(GroupedQueryAttention), got {type(model).__name__} with none"
        )
    return found
