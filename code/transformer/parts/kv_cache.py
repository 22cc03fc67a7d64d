"""The KV cache: keys and values of the tokens already seen, kept for the next step."""

from __future__ import annotations

import torch

from ..checks.tensors import check_positive_int, check_tensor, shape_str


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
    """One :class:`LayerKVCache` per attention layer of a model.

    Pass it to :meth:`~transformer.models.decoder_only.DecoderOnlyTransformer.forward`
    as
    ``cache=``: each call then computes keys and values for the new tokens
    only, appends them, and attends over everything cached.
    :func:`~transformer.inference.generate.generate` does this for you.

    Args:
        n_layers: The number of attention layers, ``N``.

    Raises:
        TypeError: If ``n_layers`` is not an int.
        ValueError: If ``n_layers`` is not positive.
    """

    def __init__(self, n_layers: int) -> None:
        self.layers = [
            LayerKVCache() for _ in range(check_positive_int("n_layers", n_layers))
        ]

    def __getitem__(self, i: int) -> LayerKVCache:
        """Return the cache of layer ``i``."""
        return self.layers[i]

    def __len__(self) -> int:
        """Return the number of layers."""
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
