"""The KV cache: keys and values of the tokens already seen, kept for the next step."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.kv_cache import check_layer_cache_update


class LayerKVCache:
    """The keys and values of one attention layer, written in place step by step.

    The first update allocates room for ``max_len`` positions; every update
    writes the new keys and values after the ones held, without copying the
    old ones while there is room, and the attention reads the filled part.
    Without ``max_len`` the room doubles whenever it runs out, and only then
    are the held positions copied into the larger buffer.

    Args:
        max_len: The most positions the cache will hold, or ``None``.

    Attributes:
        key: The cached keys, ``(B, n_kv_heads, T, d_k)``, a view of the
            buffer ``keys``, or ``None`` while empty.
        value: The cached values, a view of ``values``, or ``None``.
    """

    def __init__(self, max_len: int | None = None) -> None:
        self.max_len = max_len
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None
        self.key: torch.Tensor | None = None
        self.value: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """The number of positions ``T`` held."""
        # read from a shape, not kept as an int: torch.compile then sees one
        # graph for every length, where an int attribute would be a constant
        return 0 if self.key is None else self.key.shape[-2]

    def update(
        self, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new positions' keys and values after the cached ones; return all.

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
        check_layer_cache_update(self, key, value)
        T, L = self.length, key.shape[-2]
        if self.keys is None or T + L > self.keys.shape[-2]:
            self.grow(key, T + L)
        self.keys[:, :, T : T + L] = key
        self.values[:, :, T : T + L] = value
        # (B, n_kv_heads, T + L, d_k) each: views of the filled part
        self.key, self.value = self.keys[:, :, : T + L], self.values[:, :, : T + L]
        return self.key, self.value

    def grow(self, key: torch.Tensor, needed: int) -> None:
        """Allocate a buffer for ``max_len`` (or twice the room) positions."""
        room = max(needed, self.max_len or 2 * needed)
        B, heads, _, d_k = key.shape
        keys = key.new_zeros(B, heads, room, d_k)
        values = key.new_zeros(B, heads, room, d_k)
        if self.key is not None:
            keys[:, :, : self.length] = self.key
            values[:, :, : self.length] = self.value
        self.keys, self.values = keys, values


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
        max_len = getattr(getattr(model, "config", None), "max_len", None)
        self.layers = [LayerKVCache(max_len) for _ in self.attentions]

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
        """The memory the cached keys and values take, in bytes.

        This counts the ``T`` positions held; the buffers hold room for
        ``max_len``.
        """
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
