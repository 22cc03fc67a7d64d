"""Two other ways of writing multi-head attention, kept for experiments.

The model never uses this module, and no chapter shows it. It holds two other
ways of writing :class:`~transformer.parts.multihead.MultiHeadAttention`, the
package's fused version, for readers who want to compare them:

* :class:`HeadwiseMultiHeadAttention` keeps one small :class:`AttentionHead`
  module per head, runs them one after the other and concatenates their
  outputs, exactly as the paper's formula reads. Simple, but slow: ``h``
  small matrix products where one large one would do.
* :class:`EinsumMultiHeadAttention` keeps every weight with an explicit head
  axis and writes each step as one ``torch.einsum``, so that the shape letters
  of the paper appear in the code.

Both have a ``from_multihead`` constructor that copies the weights of a
:class:`~transformer.parts.multihead.MultiHeadAttention`; the tests check that
the three then agree. Neither has dropout: compare them in evaluation mode.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from ..checks.multihead import check_attention_inputs, check_attention_sizes
from ..parts.attention import scaled_dot_product_attention
from ..parts.multihead import MultiHeadAttention


class _MultiHeadSizes(nn.Module):
    """Keep ``d_model``, ``h``, ``d_k``, checked as ``MultiHeadAttention`` does."""

    def __init__(self, d_model: int, h: int) -> None:
        super().__init__()
        check_attention_sizes(d_model, h, 0.0)
        self.d_model, self.h, self.d_k = d_model, h, d_model // h


def _mask_per_head(
    mask: torch.Tensor | None, query: torch.Tensor, key: torch.Tensor, h: int
) -> torch.Tensor | None:
    """Expand a checked mask to ``(B, h, L, S)``: head ``i`` reads ``mask[:, i]``."""
    if mask is None:
        return None
    return mask.expand(query.shape[0], h, query.shape[1], key.shape[1])


class AttentionHead(nn.Module):
    """Project queries, keys and values to width ``d_k`` and attend: one head.

    Args:
        d_model: Width of the inputs.
        d_k: Width of this head's queries, keys and values.
        bias: Whether the three projections have a bias.

    Attributes:
        w_q: Projection of the queries, ``d_model`` to ``d_k``.
        w_k: Projection of the keys, ``d_model`` to ``d_k``.
        w_v: Projection of the values, ``d_model`` to ``d_k``.
    """

    def __init__(self, d_model: int, d_k: int, *, bias: bool = True) -> None:
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_model, d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_k, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Return this head's output.

        Args:
            query: The sequence that asks.
            key: The sequence that is looked at.
            value: What is read at each key position.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, L, S)``.

        Returns:
            The head's attended sequence.

        Shape:
            - query: ``(B, L, d_model)``
            - key, value: ``(B, S, d_model)``
            - output: ``(B, L, d_k)``
        """
        # (B, L or S, d_k)
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        # (B, L, d_k)
        return scaled_dot_product_attention(q, k, v, mask)[0]


class HeadwiseMultiHeadAttention(_MultiHeadSizes):
    """Run ``h`` separate :class:`AttentionHead` modules, concatenate, and project.

    Another way of writing
    :class:`~transformer.parts.multihead.MultiHeadAttention`: it computes the same,
    one head at a time, the way the paper's formula is written.

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of heads; must divide ``d_model``.
        bias: Whether the projections have a bias.

    Attributes:
        heads: The ``h`` heads, each with its own ``d_model`` to ``d_k``
            projections.
        w_o: Output projection of the concatenated heads, ``h * d_k`` to
            ``d_model``.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive or ``h`` does not divide ``d_model``.
    """

    def __init__(self, d_model: int, h: int, *, bias: bool = True) -> None:
        super().__init__(d_model, h)
        self.heads = nn.ModuleList(
            AttentionHead(d_model, self.d_k, bias=bias) for _ in range(h)
        )
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Attend with every head in turn and mix the concatenated results.

        The arguments, shapes and errors are those of
        :meth:`MultiHeadAttention.forward
        <transformer.parts.multihead.MultiHeadAttention.forward>`.
        """
        check_attention_inputs(self, query, key, value, mask)
        mask = _mask_per_head(mask, query, key, self.h)
        # h tensors (B, L, d_k), one per head
        outputs = [
            head(query, key, value, None if mask is None else mask[:, i])
            for i, head in enumerate(self.heads)
        ]
        # (B, L, d_model)
        return self.w_o(torch.cat(outputs, dim=-1))

    @classmethod
    def from_multihead(cls, mha: MultiHeadAttention) -> HeadwiseMultiHeadAttention:
        """Build the headwise equivalent of ``mha``, copying its weights.

        Head ``i`` owns rows ``i * d_k`` to ``(i + 1) * d_k`` of each of
        ``mha``'s query, key and value projections.

        Args:
            mha: The fused module to copy.

        Returns:
            A new module that computes what ``mha`` computes in evaluation mode.
        """
        bias = mha.w_q.bias is not None
        ours = cls(mha.d_model, mha.h, bias=bias).to(mha.w_q.weight)
        with torch.no_grad():
            for i, head in enumerate(ours.heads):
                rows = slice(i * mha.d_k, (i + 1) * mha.d_k)
                for name in ("w_q", "w_k", "w_v"):
                    fused, small = getattr(mha, name), getattr(head, name)
                    # (d_k, d_model)
                    small.weight.copy_(fused.weight[rows])
                    if bias:
                        # (d_k,)
                        small.bias.copy_(fused.bias[rows])
            ours.w_o.load_state_dict(mha.w_o.state_dict())
        return ours


class EinsumMultiHeadAttention(_MultiHeadSizes):
    """Multi-head attention with an explicit head axis on every weight, in ``einsum``.

    Another way of writing :class:`~transformer.parts.multihead.MultiHeadAttention`.
    The weights are stored as ``(h, d_k, d_model)`` (queries, keys, values)
    and ``(d_model, h, d_k)`` (output), so that each step of the computation
    is one ``einsum`` over named axes: ``b`` batch, ``l`` query position,
    ``s`` key position, ``h`` head, ``k`` within a head, ``d`` model width.

    Args:
        d_model: Width of the inputs and of the output.
        h: Number of heads; must divide ``d_model``.
        bias: Whether the projections have a bias.

    Attributes:
        w_q: Per-head query projections, ``(h, d_k, d_model)``.
        w_k: Per-head key projections, ``(h, d_k, d_model)``.
        w_v: Per-head value projections, ``(h, d_k, d_model)``.
        b_q: Per-head query biases, ``(h, 1, d_k)``, or ``None`` without bias.
        b_k: Per-head key biases, ``(h, 1, d_k)``, or ``None`` without bias.
        b_v: Per-head value biases, ``(h, 1, d_k)``, or ``None`` without bias.
        w_o: Output weight, ``(d_model, h, d_k)``.
        b_o: Output bias, ``(d_model,)``, or ``None`` without bias.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive or ``h`` does not divide ``d_model``.
    """

    def __init__(self, d_model: int, h: int, *, bias: bool = True) -> None:
        super().__init__(d_model, h)
        d_k = self.d_k
        # Initialised as MultiHeadAttention's nn.Linear layers are; from_multihead
        # overwrites.
        bound = 1 / math.sqrt(d_model)
        for name in ("q", "k", "v"):
            self.register_parameter(
                f"w_{name}", nn.Parameter(_uniform(bound, h, d_k, d_model))
            )
            b = nn.Parameter(_uniform(bound, h, 1, d_k)) if bias else None
            self.register_parameter(f"b_{name}", b)
        self.w_o = nn.Parameter(_uniform(bound, d_model, h, d_k))
        self.b_o = nn.Parameter(_uniform(bound, d_model)) if bias else None

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Project per head, attend per head, and mix the heads, each in one ``einsum``.

        The arguments, shapes and errors are those of
        :meth:`MultiHeadAttention.forward
        <transformer.parts.multihead.MultiHeadAttention.forward>`;
        a fully masked row gives a zero output.
        """
        check_attention_inputs(self, query, key, value, mask)
        mask = _mask_per_head(mask, query, key, self.h)
        # (B, h, L, d_k)
        q = torch.einsum("bld,hkd->bhlk", query, self.w_q)
        # (B, h, S, d_k)
        k = torch.einsum("bsd,hkd->bhsk", key, self.w_k)
        # (B, h, S, d_k)
        v = torch.einsum("bsd,hkd->bhsk", value, self.w_v)
        if self.b_q is not None:
            q, k, v = q + self.b_q, k + self.b_k, v + self.b_v
        # (B, h, L, S)
        scores = torch.einsum("bhlk,bhsk->bhls", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        # A fully masked row is softmax(all -inf) = NaN; make its weights zero.
        # (B, h, L, S)
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        # (B, h, L, d_k)
        heads = torch.einsum("bhls,bhsk->bhlk", weights, v)
        # Concatenating the heads and projecting is a sum over heads and k at once.
        # (B, L, d_model)
        out = torch.einsum("bhlk,dhk->bld", heads, self.w_o)
        return out if self.b_o is None else out + self.b_o

    @classmethod
    def from_multihead(cls, mha: MultiHeadAttention) -> EinsumMultiHeadAttention:
        """Build the einsum equivalent of ``mha``, copying its weights.

        A fused ``(h * d_k, d_model)`` projection is viewed as
        ``(h, d_k, d_model)``: its rows, cut into ``h`` blocks. The output
        projection's ``(d_model, h * d_k)`` weight is viewed as
        ``(d_model, h, d_k)``: its columns, cut the same way.

        Args:
            mha: The fused module to copy.

        Returns:
            A new module that computes what ``mha`` computes in evaluation mode.
        """
        h, d_k, d_model = mha.h, mha.d_k, mha.d_model
        bias = mha.w_q.bias is not None
        ours = cls(d_model, h, bias=bias).to(mha.w_q.weight)
        with torch.no_grad():
            for name in ("q", "k", "v"):
                fused = getattr(mha, f"w_{name}")
                getattr(ours, f"w_{name}").copy_(fused.weight.view(h, d_k, d_model))
                if bias:
                    getattr(ours, f"b_{name}").copy_(fused.bias.view(h, 1, d_k))
            ours.w_o.copy_(mha.w_o.weight.view(d_model, h, d_k))
            if bias:
                ours.b_o.copy_(mha.w_o.bias)
        return ours


def _uniform(bound: float, *shape: int) -> torch.Tensor:
    """Return a tensor of ``shape`` drawn uniformly from ``[-bound, bound]``."""
    return torch.empty(*shape).uniform_(-bound, bound)
