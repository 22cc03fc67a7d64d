"""Multi-head attention: ``h`` scaled dot-product attentions side by side."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.multihead import check_attention_inputs, check_attention_sizes
from .attention import fused_attention, scaled_dot_product_attention
from .masks import CausalMask, mask_tensor


def split_heads(x: torch.Tensor, h: int) -> torch.Tensor:
    """Cut the last axis into ``h`` heads and move the heads before the positions.

    Args:
        x: A projected sequence.
        h: Number of heads; divides the width of ``x``.

    Returns:
        The same numbers, one ``(n, d_k)`` matrix per head.

    Shape:
        - x: ``(B, n, h * d_k)``
        - output: ``(B, h, n, d_k)``
    """
    B, n, width = x.shape
    return x.view(B, n, h, width // h).transpose(1, 2)


class MultiHeadAttention(nn.Module):
    """Attend to ``h`` learned projections of the inputs at once, then mix the heads.

    Each of the ``h`` heads sees its own ``d_k = d_model // h``-wide slice of
    the projected queries, keys and values, so the total cost is close to one
    attention of full width. The queries, keys and values have three separate
    projections, ``w_q``, ``w_k`` and ``w_v``, one per matrix of the paper;
    ``nn.MultiheadAttention`` stores the same numbers as one fused matrix.
    Because the three are independent, the same code serves self-attention
    (``query is key is value``) and cross-attention, where ``key`` and
    ``value`` come from a sequence of another length ``S``.

    :class:`~transformer.parts.gqa.GroupedQueryAttention` is this module with
    fewer key and value heads: it changes :meth:`project` and :meth:`attend`,
    and keeps :meth:`forward`.

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of heads; must divide ``d_model``.
        dropout: Probability of zeroing an attention weight, in training only.
        bias: Whether the four projections have a bias.

    Attributes:
        w_q, w_k, w_v: Projections of the queries, keys and values, each
            ``d_model`` to ``h * d_k``.
        w_o: Output projection mixing the concatenated heads, ``h * d_k`` to
            ``d_model``.
        attn_weights: The ``(B, h, L, S)`` weights of the latest call that
            asked for them (``need_weights=True``, or inside
            :func:`~transformer.tools.record.record_attention`), detached;
            ``None`` after a call that did not. In training, after dropout.
        record_weights: Whether every call keeps its weights, as if
            ``need_weights=True``; ``record_attention`` sets it.

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, or ``dropout`` is outside ``[0, 1)``.
    """

    def __init__(
        self, d_model: int, h: int, *, dropout: float = 0.0, bias: bool = True
    ) -> None:
        check_attention_sizes(d_model, h, dropout)
        super().__init__()
        self.d_model, self.h, self.d_k, self.dropout = d_model, h, d_model // h, dropout
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
        mask: torch.Tensor | CausalMask | None = None,
        *,
        need_weights: bool = False,
    ) -> torch.Tensor:
        """Attend from every query position to the key positions, in every head.

        Args:
            query: The sequence that asks.
            key: The sequence that is looked at; ``query`` itself for
                self-attention.
            value: What is read at each key position; usually ``key``.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, S)``: ``(L, S)`` for a causal mask,
                ``(B, 1, 1, S)`` for key padding. A 2-D mask is read as
                ``(L, S)``; a 3-D ``(B, L, S)`` mask is rejected and needs
                ``mask[:, None]``. :data:`~transformer.parts.masks.CAUSAL`
                is the causal mask, never built.
            need_weights: Compute through the package's own
                :func:`~transformer.parts.attention.scaled_dot_product_attention`
                and keep the weights in :attr:`attn_weights`. Otherwise
                PyTorch's fused kernel computes the same output.

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
        check_attention_inputs(self, query, key, value, mask)
        q, k, v = self.project(query, key, value)
        # (B, h, L, d_k)
        heads = self.attend(q, k, v, mask, need_weights=need_weights)
        # (B, L, h * d_k): the heads side by side again
        concat = heads.transpose(1, 2).flatten(2)
        return self.w_o(concat)

    def project(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Project the inputs and cut each projection into ``h`` heads."""
        # (B, h, L, d_k)
        q = split_heads(self.w_q(query), self.h)
        # (B, h, S, d_k)
        k = split_heads(self.w_k(key), self.h)
        # (B, h, S, d_k)
        v = split_heads(self.w_v(value), self.h)
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
        """Attend in every head: the book's function if the weights are wanted,
        else PyTorch's fused kernel, which keeps no ``(L, S)`` matrix."""
        dropout_p = self.dropout if self.training else 0.0
        if need_weights or self.record_weights:
            # (L, S) or (B, h, L, S): the mask as a tensor
            mask = mask_tensor(mask, q.shape[-2], k.shape[-2], device=q.device)
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p)
            self.attn_weights = weights.detach()
            return out
        self.attn_weights = None
        return fused_attention(q, k, v, mask, dropout_p)

    def extra_repr(self) -> str:
        """Show the paper's sizes when the module is printed."""
        sizes = f"d_model={self.d_model}, h={self.h}, d_k={self.d_k}"
        return f"{sizes}, dropout={self.dropout}"
