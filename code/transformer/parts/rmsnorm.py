"""Root-mean-square normalisation: layer norm without the mean and the bias."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.parts import check_rms_norm_args, check_rms_norm_input


class RMSNorm(nn.Module):
    """Divide each position's vector by its root mean square, then scale it.

    Layer norm subtracts the mean, divides by the standard deviation, then
    scales and shifts. RMSNorm (Zhang and Sennrich, 2019), used by LLaMA and
    most decoders since, keeps only the division and the scale: there is no
    mean to subtract and no bias. It computes what ``torch.nn.RMSNorm(d_model,
    eps)`` computes.

    Args:
        d_model: Width of the vectors to normalise.
        eps: Added to the mean square before the square root, for stability.
            The default, ``1e-6``, is LLaMA 1's; the package's configs pass
            their ``norm_eps`` (``1e-5``), so a model's norms use that.

    Attributes:
        weight: The gain, an ``nn.Parameter`` of shape ``(d_model,)``, ones at first.

    Raises:
        TypeError: If ``d_model`` is not an int or ``eps`` not a number.
        ValueError: If ``d_model`` or ``eps`` is not positive.
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        check_rms_norm_args(d_model, eps)
        super().__init__()
        self.d_model, self.eps = d_model, float(eps)
        self.weight = nn.Parameter(torch.ones(d_model))

    @entry
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``weight * x / sqrt(mean(x²) + eps)`` over the last axis.

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
        check_rms_norm_input(self, x)
        # (..., 1)
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)
        return self.weight * x * torch.rsqrt(mean_square + self.eps)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, eps={self.eps}"
