"""Layer normalisation and the residual "Add & Norm" around every sublayer."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.norms import (
    check_add_norm,
    check_add_norm_options,
    check_layer_norm,
    check_norm_sizes,
)


class LayerNorm(nn.Module):
    """Normalise each position's vector to mean 0 and variance 1, then scale and shift.

    Written out by hand; it computes what ``nn.LayerNorm(d_model, eps)``
    computes. The statistics are taken over the last axis only, so each
    position of each sequence is normalised on its own (unlike batch norm,
    nothing depends on the other examples in the batch). The variance is
    the biased one (divided by ``d_model``, not ``d_model - 1``), and the gain
    and bias are vectors, one entry per feature.

    Args:
        d_model: Width of the vectors to normalise.
        eps: Added to the variance before the square root, for stability.

    Attributes:
        weight: The gain, an ``nn.Parameter`` of shape ``(d_model,)``, ones at first.
        bias: The shift, an ``nn.Parameter`` of shape ``(d_model,)``, zeros at first.

    Raises:
        TypeError: If ``d_model`` is not an int or ``eps`` not a number.
        ValueError: If ``d_model`` or ``eps`` is not positive.
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        check_norm_sizes(d_model, eps)
        super().__init__()
        self.d_model, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    @entry
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``weight * (x - mean) / sqrt(var + eps) + bias`` over the last axis.

        Args:
            x: Any tensor whose last axis has ``d_model`` features.

        Returns:
            The normalised tensor.

        Shape:
            - x: ``(..., d_model)``, usually ``(B, L, d_model)``
            - output: same as ``x``

        Raises:
            TypeError: If ``x`` is not a tensor.
            ValueError: If the last axis of ``x`` is not ``d_model``.
        """
        check_layer_norm(self, x)
        # (..., 1)
        mean = x.mean(dim=-1, keepdim=True)
        # (..., 1)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, eps={self.eps}"


class AddNorm(nn.Module):
    """Wrap a sublayer in a residual connection with layer normalisation ("Add & Norm").

    Two arrangements exist, and this module does both:

    * post-norm, the paper's: ``norm(x + dropout(sublayer(x)))``;
    * pre-norm (``norm_first=True``): ``x + dropout(sublayer(norm(x)))``.
      The residual path then carries ``x`` through unchanged, which makes
      deep stacks easier to train; a stack of pre-norm layers needs one
      final norm at its end.

    Args:
        d_model: Width of the sequence.
        dropout: Dropout probability on the sublayer's output, in training only.
        norm_first: ``False`` for post-norm, ``True`` for pre-norm.
        eps: The ``eps`` of the :class:`LayerNorm` made when ``norm`` is ``None``.
        norm: The normalisation module to use, of width ``d_model``; ``None``
            (the default) makes a :class:`LayerNorm`, the paper's.

    Attributes:
        norm: The normalisation module.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If ``d_model`` or ``eps`` is not positive, or ``dropout`` is
            outside ``[0, 1)``.
    """

    def __init__(
        self,
        d_model: int,
        *,
        dropout: float = 0.0,
        norm_first: bool = False,
        eps: float = 1e-5,
        norm: nn.Module | None = None,
    ) -> None:
        check_add_norm_options(d_model, dropout, norm_first, norm)
        super().__init__()
        self.norm_first = norm_first
        self.norm = LayerNorm(d_model, eps) if norm is None else norm
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        """Apply ``sublayer`` to ``x`` with the residual connection and the norm.

        Args:
            x: The sequence entering the sublayer.
            sublayer: A function from ``(B, L, d_model)`` to ``(B, L, d_model)``,
                e.g. ``lambda y: attn(y, y, y, mask)``.

        Returns:
            The sequence leaving the block.

        Shape:
            - x: ``(B, L, d_model)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor.
            ValueError: If ``x`` is not ``(B, L, d_model)``.
        """
        check_add_norm(self, x, sublayer)
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))

    def extra_repr(self) -> str:
        """Show which arrangement is used when the module is printed."""
        return "pre-norm" if self.norm_first else "post-norm"
