"""The gated feed-forward network of LLaMA and PaLM: SwiGLU."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..checks.contract import entry
from ..checks.parts import check_feedforward_args, check_feedforward_input


class SwiGLU(nn.Module):
    """Gate one linear map of each position with the SiLU of another, then project back.

    ``w_down(silu(w_gate(x)) * w_up(x))`` (Shazeer, 2020). Where the paper's
    network has two matrices, this one has three, so a SwiGLU with hidden
    width ``2/3 * d_ff`` has as many weights as a ReLU network of width
    ``d_ff``; the modern-decoder chapter works this out.

    Args:
        d_model: Width of the inputs and outputs.
        d_ff: Hidden width of the gate and of the up projection.
        bias: Whether the three linear maps have a bias (LLaMA: no).
        dropout: Dropout probability on the gated hidden activations, in
            training only.

    Attributes:
        w_gate: ``nn.Linear`` from ``d_model`` to ``d_ff``, through SiLU.
        w_up: ``nn.Linear`` from ``d_model`` to ``d_ff``, the gated values.
        w_down: ``nn.Linear`` from ``d_ff`` back to ``d_model``.

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive or ``dropout`` is outside ``[0, 1)``.
    """

    def __init__(
        self, d_model: int, d_ff: int, *, bias: bool = False, dropout: float = 0.0
    ) -> None:
        check_feedforward_args(d_model, d_ff, dropout)
        super().__init__()
        self.d_model, self.d_ff = d_model, d_ff
        self.w_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.w_up = nn.Linear(d_model, d_ff, bias=bias)
        self.w_down = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    @entry
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the gated network to every position independently.

        Args:
            x: A sequence of vectors.

        Returns:
            The transformed sequence.

        Shape:
            - x: ``(B, L, d_model)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor of the
                weights' dtype.
            ValueError: If ``x`` is not ``(B, L, d_model)`` or is on another
                device than the weights.
        """
        check_feedforward_input(self, x)
        # (B, L, d_ff)
        hidden = F.silu(self.w_gate(x)) * self.w_up(x)
        # (B, L, d_model)
        return self.w_down(self.dropout(hidden))

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, d_ff={self.d_ff}"
