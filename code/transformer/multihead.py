"""Multi-head attention: ``h`` scaled dot-product attentions side by side."""

from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import (
    check_divisible,
    check_mask,
    check_positive_int,
    check_probability,
    check_sequence,
    shape_str,
)
from ._contract import contract, entry
from .attention import scaled_dot_product_attention


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
        attn_weights: The attention weights of the latest ``forward`` call,
            detached from the graph, of shape ``(B, h, L, S)``; ``None`` before
            the first call. In training they are the weights after dropout.

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

    @entry
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Attend from every query position to the key positions, in every head.

        Args:
            query: The sequence that asks.
            key: The sequence that is looked at; ``query`` itself for
                self-attention.
            value: What is read at each key position; usually ``key``.
            mask: Optional boolean mask, ``True`` = may attend, ``False`` =
                blocked, broadcastable to ``(B, h, L, S)``: ``(L, S)`` for a
                causal mask, ``(B, 1, 1, S)`` for key padding. A ``(B, L, S)``
                mask needs a head axis first: ``mask[:, None]``.

        Returns:
            The attended sequence. The weights are kept in :attr:`attn_weights`.

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
        _check_multihead(self, query, key, value, mask)
        B, L, _ = query.shape
        q = self._split_heads(self.w_q(query))  # (B, h, L, d_k)
        k = self._split_heads(self.w_k(key))  # (B, h, S, d_k)
        v = self._split_heads(self.w_v(value))  # (B, h, S, d_k)
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p
        )  # (B, h, L, d_k)
        self.attn_weights = weights.detach()  # (B, h, L, S)
        concat = heads.transpose(1, 2).reshape(B, L, self.d_model)  # (B, L, d_model)
        return self.w_o(concat)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """Cut the last axis into ``h`` heads of width ``d_k``; move heads forward."""
        B, n, _ = x.shape
        return x.view(B, n, self.h, self.d_k).transpose(1, 2)  # (B, h, n, d_k)

    def extra_repr(self) -> str:
        """Show the paper's sizes when the module is printed."""
        sizes = f"d_model={self.d_model}, h={self.h}, d_k={self.d_k}"
        return f"{sizes}, dropout={self.dropout}"


@contract
def _check_multihead(
    mha: MultiHeadAttention, query: object, key: object, value: object, mask: object
) -> None:
    """Check the arguments of :meth:`MultiHeadAttention.forward`."""
    check_sequence("query", query, mha.d_model, "(B, L, d_model)")
    check_sequence("key", key, mha.d_model, "(B, S, d_model)")
    check_sequence("value", value, mha.d_model, "(B, S, d_model)")
    (B, L, _), S = query.shape, key.shape[1]
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
    if mask is not None:
        check_mask("mask", mask, (B, mha.h, L, S), "(B, h, L, S)")
