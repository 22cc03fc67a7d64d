"""The position-wise feed-forward network: the same small MLP at every position."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.parts import check_feedforward_args, check_feedforward_input

ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "gelu_tanh": partial(nn.GELU, approximate="tanh"),
}
"""The activations a feed-forward network may use, by name; ``"gelu_tanh"`` is
the tanh approximation of GELU that GPT-2 uses."""


class PositionwiseFeedForward(nn.Module):
    """Widen each position to ``d_ff``, apply a nonlinearity, and project back.

    Positions do not interact here: every position of every sequence goes
    through the same two linear maps independently. Attention moves
    information between positions; this network transforms it in place.
    Dropout sits after the activation, where PyTorch's Transformer layers
    put it.

    Args:
        d_model: Width of the inputs and outputs.
        d_ff: Hidden width (2048 in the paper, four times ``d_model``).
        dropout: Dropout probability on the hidden activations, in training only.
        activation: ``"relu"`` (the paper), ``"gelu"`` (the exact, erf form)
            or ``"gelu_tanh"`` (its tanh approximation, GPT-2's).

    Attributes:
        w_1: The widening map, ``d_model`` to ``d_ff``.
        w_2: The narrowing map, ``d_ff`` to ``d_model``.

    Raises:
        TypeError: If a size is not an int, ``dropout`` not a number or
            ``activation`` not a string.
        ValueError: If a size is not positive, ``dropout`` is outside
            ``[0, 1)`` or ``activation`` is unknown.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        *,
        dropout: float = 0.0,
        activation: str = "relu",
    ) -> None:
        check_feedforward_args(d_model, d_ff, dropout, activation, tuple(ACTIVATIONS))
        super().__init__()
        self.d_model, self.d_ff, self.activation_name = d_model, d_ff, activation
        self.w_1 = nn.Linear(d_model, d_ff)
        self.activation = ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)
        self.w_2 = nn.Linear(d_ff, d_model)

    @entry
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply ``w_2(dropout(activation(w_1(x))))`` at every position.

        Args:
            x: A batch of sequences.

        Returns:
            The transformed sequences.

        Shape:
            - x: ``(B, L, d_model)``
            - output: ``(B, L, d_model)``

        Raises:
            TypeError: If ``x`` is not a floating-point tensor.
            ValueError: If ``x`` is not ``(B, L, d_model)``.
        """
        check_feedforward_input(self, x)
        # (B, L, d_ff)
        hidden = self.dropout(self.activation(self.w_1(x)))
        # (B, L, d_model)
        return self.w_2(hidden)
