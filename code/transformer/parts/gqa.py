"""Grouped-query attention: many query heads share a few key and value heads."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import contract, entry
from ..checks.tensors import (
    check_divisible,
    check_mask,
    check_positive_int,
    check_probability,
    check_sequence,
)
from .attention import _attend
from .kv_cache import LayerKVCache
from .rotary import RotaryEmbedding


class GroupedQueryAttention(nn.Module):
    """Self-attention whose ``h`` query heads share ``n_kv_heads`` key and value heads.

    Query heads come in ``n_kv_heads`` groups of ``h // n_kv_heads``; the heads
    of one group read the same keys and values (Ainslie et al., 2023).
    ``n_kv_heads == h`` is multi-head attention, ``n_kv_heads == 1`` is
    multi-query attention (Shazeer, 2019). Fewer key and value heads mean
    smaller ``w_k`` and ``w_v`` and, above all, a smaller KV cache when
    generating. Optionally, a :class:`~transformer.parts.rotary.RotaryEmbedding`
    turns the queries and keys by their positions.

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of query heads; must divide ``d_model``.
        n_kv_heads: Number of key and value heads; must divide ``h``.
        rope: Rotary embedding for heads of width ``d_k = d_model // h``, or
            ``None`` for no positions here.
        bias: Whether the four projections have a bias (LLaMA: no).
        dropout: Probability of zeroing an attention weight, in training only.

    Attributes:
        w_q: Projection of the queries, ``d_model`` to ``h * d_k``.
        w_k: Projection of the keys, ``d_model`` to ``n_kv_heads * d_k``.
        w_v: Projection of the values, ``d_model`` to ``n_kv_heads * d_k``.
        w_o: Output projection, ``h * d_k`` to ``d_model``.
        rope: The rotary embedding, or ``None``.
        attn_weights: The weights of the latest call that asked for them
            (``need_weights=True`` or inside
            :func:`~transformer.tools.record.record_attention`), detached, ``(B, h, L,
            S)``;
            ``None`` after a call that did not.
        record_weights: Whether every call keeps its weights, as
            if
            ``need_weights=True``; :func:`~transformer.tools.record.record_attention` sets it.

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
        n_kv_heads: int,
        rope: RotaryEmbedding | None = None,
        bias: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.h = check_positive_int("h", h)
        self.n_kv_heads = check_positive_int("n_kv_heads", n_kv_heads)
        check_divisible("d_model", d_model, "h", h)
        check_divisible("h", h, "n_kv_heads", n_kv_heads)
        self.d_k = d_model // h
        self.dropout = check_probability("dropout", dropout)
        if rope is not None and (
            not isinstance(rope, RotaryEmbedding) or rope.d_k != self.d_k
        ):
            raise ValueError(
                f"rope must be a RotaryEmbedding with d_k={self.d_k}, got {rope!r}"
            )
        self.rope = rope
        self.w_q = nn.Linear(d_model, h * self.d_k, bias=bias)
        self.w_k = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.w_o = nn.Linear(h * self.d_k, d_model, bias=bias)
        self.attn_weights: torch.Tensor | None = None
        self.record_weights = False

    @entry
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        need_weights: bool = False,
        cache: LayerKVCache | None = None,
    ) -> torch.Tensor:
        """Attend from every position of ``x`` to those of ``x`` (and of the cache).

        Args:
            x: The sequence.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable to
                ``(B, h, L, S)``; ``S = L`` plus the cached positions.
            need_weights: Compute through the package's own attention and keep
                the weights in :attr:`attn_weights`; otherwise PyTorch's fused
                kernel computes the output and no weights are stored.
            cache: The layer's KV cache: the new keys and values are appended
                to it, and the queries attend to all of them. The positions of
                ``x`` continue those in the cache.

        Returns:
            The attended sequence.

        Shape:
            - x: ``(B, L, d_model)``
            - mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor or ``mask`` not boolean.
            ValueError: If ``x`` or ``mask`` has the wrong shape.
        """
        _check_gqa(self, x, mask, cache)
        B, L, _ = x.shape
        offset = 0 if cache is None else cache.length
        # (B, h, L, d_k)
        q = self.w_q(x).view(B, L, self.h, self.d_k).transpose(1, 2)
        # (B, h_kv, L, d_k)
        k = self.w_k(x).view(B, L, self.n_kv_heads, self.d_k).transpose(1, 2)
        # (B, h_kv, L, d_k)
        v = self.w_v(x).view(B, L, self.n_kv_heads, self.d_k).transpose(1, 2)
        if self.rope is not None:
            q, k = self.rope(q, offset), self.rope(k, offset)
        if cache is not None:
            # (B, h_kv, S, d_k) each
            k, v = cache.update(k, v)
        dropout_p = self.dropout if self.training else 0.0
        keep = need_weights or self.record_weights
        # (B, h, L, d_k)
        heads, weights = _attend(q, k, v, mask, dropout_p, keep)
        # (B, h, L, S)
        self.attn_weights = None if weights is None else weights.detach()
        # (B, L, h * d_k)
        concat = heads.transpose(1, 2).reshape(B, L, self.h * self.d_k)
        return self.w_o(concat)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        sizes = f"d_model={self.d_model}, h={self.h}, n_kv_heads={self.n_kv_heads}"
        return f"{sizes}, d_k={self.d_k}"


@contract
def _check_gqa(
    attn: GroupedQueryAttention, x: object, mask: object, cache: LayerKVCache | None
) -> None:
    """Check the arguments of :meth:`GroupedQueryAttention.forward`."""
    check_sequence("x", x, attn.d_model)
    B, L, _ = x.shape
    if mask is not None:
        S = L + (0 if cache is None else cache.length)
        check_mask("mask", mask, (B, attn.h, L, S), "(B, h, L, S)")
