"""Multi-head attention: ``h`` scaled dot-product attentions side by side."""

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
    shape_str,
)
from .attention import _attend
from .kv_cache import LayerKVCache


class MultiHeadAttention(nn.Module):
    """Attend to ``h`` learned projections of the inputs at once, then mix the heads.

    Each of the ``h`` heads sees its own ``d_k = d_model // h``-wide slice of
    the projected queries, keys and values, so the total cost is close to one
    attention of full width.

    The queries, keys and values have three separate projections, ``w_q``,
    ``w_k`` and ``w_v``, one per matrix of the paper. PyTorch's
    ``nn.MultiheadAttention`` stores the same numbers as one fused
    ``(3 d_model, d_model)`` matrix; ``benchmarks/README.md`` measures what
    the separate form costs. Because the three projections are independent,
    the same code serves self-attention (``query is key is value``) and
    cross-attention, where ``key`` and ``value`` come from a sequence of
    another length ``S``.

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of heads; must divide ``d_model``.
        dropout: Probability of zeroing an attention weight, in training only.
        bias: Whether the four projections have a bias.

    Attributes:
        w_q: Projection of the queries, ``d_model`` to ``h * d_k``.
        w_k: Projection of the keys, ``d_model`` to ``h * d_k``.
        w_v: Projection of the values, ``d_model`` to ``h * d_k``.
        w_o: Output projection mixing the concatenated heads, ``h * d_k`` to
            ``d_model``.
        attn_weights: The attention weights of the latest ``forward`` call that
            asked for them (``need_weights=True``, or inside
            :func:`~transformer.tools.record.record_attention`), detached from the
            graph, of
            shape ``(B, h, L, S)``; ``None`` after a call that did not. In
            training they are the weights after dropout.
        record_weights: Whether every call keeps its weights, as
            if
            ``need_weights=True``; :func:`~transformer.tools.record.record_attention` sets it.

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, or ``dropout`` is outside ``[0, 1)``.
    """

    def __init__(
        self, d_model: int, h: int, dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.h = check_positive_int("h", h)
        check_divisible("d_model", d_model, "h", h)
        self.d_k = d_model // h
        self.dropout = check_probability("dropout", dropout)
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_weights: torch.Tensor | None = None
        self.record_weights = False

    @entry
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        need_weights: bool = False,
        cache: LayerKVCache | None = None,
    ) -> torch.Tensor:
        """Attend from every query position to the key positions, in every head.

        Args:
            query: The sequence that asks.
            key: The sequence that is looked at; ``query`` itself for
                self-attention.
            value: What is read at each key position; usually ``key``.
            mask: Optional boolean mask, ``True`` = may attend, ``False`` =
                blocked, broadcastable to ``(B, h, L, S)``: ``(L, S)`` for a
                causal mask, ``(B, 1, 1, S)`` for key padding. A 2-D mask is
                read as ``(L, S)``, the same for every sequence, so a ``(B, S)``
                padding mask must become ``mask[:, None, None, :]``; a 3-D
                ``(B, L, S)`` mask is rejected and needs ``mask[:, None]``.
            need_weights: Compute through the package's own
                :func:`~transformer.parts.attention.scaled_dot_product_attention` and
                keep the weights in :attr:`attn_weights`. Otherwise (the
                default) PyTorch's fused ``F.scaled_dot_product_attention``
                computes the same output and no weights are kept.
            cache: For self-attention while generating: the layer's KV cache.
                The new keys and values are appended to it, and the queries
                attend to all of them (``S`` = cached + new positions).

        Returns:
            The attended sequence.

        Shape:
            - query: ``(B, L, d_model)``
            - key, value: ``(B, S, d_model)``
            - mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If an input is not a floating-point tensor, ``key`` or
                ``value`` differs from ``query`` in dtype, or ``mask`` is not
                boolean.
            ValueError: If the shapes do not fit together.
        """
        _check_multihead(self, query, key, value, mask, cache)
        B, L, _ = query.shape
        # (B, h, L, d_k)
        q = self._split_heads(self.w_q(query))
        # (B, h, S, d_k)
        k = self._split_heads(self.w_k(key))
        # (B, h, S, d_k)
        v = self._split_heads(self.w_v(value))
        if cache is not None:
            # (B, h, T + S, d_k) each
            k, v = cache.update(k, v)
        dropout_p = self.dropout if self.training else 0.0
        keep = need_weights or self.record_weights
        # (B, h, L, d_k)
        heads, weights = _attend(q, k, v, mask, dropout_p, keep)
        self.attn_weights = None if weights is None else weights.detach()
        # (B, L, d_model)
        concat = heads.transpose(1, 2).reshape(B, L, self.d_model)
        return self.w_o(concat)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """Cut the last axis into ``h`` heads of width ``d_k``; move heads forward."""
        B, n, _ = x.shape
        # (B, h, n, d_k)
        return x.view(B, n, self.h, self.d_k).transpose(1, 2)

    def extra_repr(self) -> str:
        """Show the paper's sizes when the module is printed."""
        sizes = f"d_model={self.d_model}, h={self.h}, d_k={self.d_k}"
        return f"{sizes}, dropout={self.dropout}"


@contract
def _check_multihead(
    mha: MultiHeadAttention,
    query: object,
    key: object,
    value: object,
    mask: object,
    cache: LayerKVCache | None = None,
) -> None:
    """Check the arguments of :meth:`MultiHeadAttention.forward`."""
    check_sequence("query", query, mha.d_model, "(B, L, d_model)", mha.w_q.weight)
    check_sequence("key", key, mha.d_model, "(B, S, d_model)")
    check_sequence("value", value, mha.d_model, "(B, S, d_model)")
    (B, L, _), S = query.shape, key.shape[1] + (0 if cache is None else cache.length)
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
    if mask is not None:
        target = (B, mha.h, L, S)
        check_mask("mask", mask, target, "(B, h, L, S)", device=query.device)
