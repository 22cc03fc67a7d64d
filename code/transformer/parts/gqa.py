"""Grouped-query attention: many query heads share a few key and value heads."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.multihead import check_attention_sizes
from .kv_cache import LayerKVCache
from .masks import CausalMask
from .multihead import MultiHeadAttention, split_heads
from .rotary import RotaryEmbedding


class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention whose ``h`` query heads share ``n_kv_heads`` kv heads.

    Query heads come in ``n_kv_heads`` groups of ``h // n_kv_heads``; the heads
    of one group read the same keys and values (Ainslie et al., 2023).
    ``n_kv_heads == h`` is multi-head attention, ``n_kv_heads == 1`` is
    multi-query attention (Shazeer, 2019). Fewer key and value heads mean
    smaller ``w_k`` and ``w_v`` and, above all, a smaller KV cache. It is
    :class:`~transformer.parts.multihead.MultiHeadAttention` with two steps
    changed: :meth:`project` (fewer key/value heads, rotary positions, the
    cache) and :meth:`attend` (each key/value head serves its group).

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of query heads; must divide ``d_model``.
        n_kv_heads: Number of key and value heads; must divide ``h``.
            ``None`` means ``h``.
        rope: A :class:`~transformer.parts.rotary.RotaryEmbedding` for heads
            of width ``d_k``, or ``None`` for no positions here.
        dropout: Probability of zeroing an attention weight, in training only.
        bias: Whether the four projections have a bias (LLaMA: no).

    Attributes:
        w_k, w_v: Projections of the keys and values, ``d_model`` to
            ``n_kv_heads * d_k``.
        rope: The rotary embedding, or ``None``.
        cache: The :class:`~transformer.parts.kv_cache.LayerKVCache` that a
            :class:`~transformer.parts.kv_cache.KVCache` attaches while it
            runs the model, else ``None``.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``n_kv_heads`` does not divide ``h``, or ``rope`` has
            another ``d_k``.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        *,
        n_kv_heads: int | None = None,
        rope: RotaryEmbedding | None = None,
        dropout: float = 0.0,
        bias: bool = False,
    ) -> None:
        check_attention_sizes(d_model, h, dropout, n_kv_heads=n_kv_heads, rope=rope)
        super().__init__(d_model, h, dropout=dropout, bias=bias)
        self.n_kv_heads = h if n_kv_heads is None else n_kv_heads
        self.rope = rope
        self.w_k = nn.Linear(d_model, self.n_kv_heads * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, self.n_kv_heads * self.d_k, bias=bias)
        self.cache: LayerKVCache | None = None

    def project(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Project into ``h`` query heads and ``n_kv_heads`` key/value heads;
        turn queries and keys by their positions; extend the cache."""
        start = 0 if self.cache is None else self.cache.length
        # (B, h, L, d_k)
        q = split_heads(self.w_q(query), self.h)
        # (B, h_kv, L, d_k)
        k = split_heads(self.w_k(key), self.n_kv_heads)
        # (B, h_kv, L, d_k)
        v = split_heads(self.w_v(value), self.n_kv_heads)
        if self.rope is not None:
            q, k = self.rope(q, start), self.rope(k, start)
        if self.cache is not None:
            # (B, h_kv, T + L, d_k) each: the cached positions, then the new ones
            k, v = self.cache.update(k, v)
        return q, k, v

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | CausalMask | None,
        *,
        need_weights: bool,
    ) -> torch.Tensor:
        """Give each query head the key/value head of its group, then attend."""
        group = self.h // self.n_kv_heads
        # (B, h, S, d_k): each key/value head repeated for its group's query heads
        k = k.repeat_interleave(group, dim=1)
        # (B, h, S, d_k)
        v = v.repeat_interleave(group, dim=1)
        return super().attend(q, k, v, mask, need_weights=need_weights)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        sizes = f"d_model={self.d_model}, h={self.h}, n_kv_heads={self.n_kv_heads}"
        return f"{sizes}, d_k={self.d_k}"
