"""SwiGLU's data flow beside the paper's feed-forward network, as block diagrams."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from .diagram import _arrow, _block


def swiglu_flow_figure(relu_ffn: torch.nn.Module, swiglu: torch.nn.Module) -> Figure:
    """Draw the paper's feed-forward network beside SwiGLU, input at the bottom.

    Each linear layer's box reads its shape from the module: the paper's
    ``w_1`` and ``w_2`` on the left; SwiGLU's ``w_gate`` (through SiLU) and
    ``w_up``, their element-wise product and ``w_down`` on the right.

    Args:
        relu_ffn: A :class:`~transformer.parts.feedforward.PositionwiseFeedForward`.
        swiglu: A :class:`~transformer.parts.swiglu.SwiGLU` of the same ``d_model``.

    Returns:
        The figure, one axes with both networks.
    """
    fig, ax = plt.subplots(figsize=(7, 4.2))
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=1.0)
    ax.set(xlim=(-0.2, 15.2), ylim=(-0.3, 7.4), aspect="equal")
    ax.axis("off")

    def linear(x: float, y: float, name: str, module: torch.nn.Module, attr: str):
        # a weight is (outputs, inputs)
        n_out, n_in = getattr(module, attr).weight.shape
        _block(ax, x, y, f"{name}: {n_in} → {n_out}", "feed_forward", attr)

    def activation(x: float, y: float, name: str) -> None:
        _block(ax, x, y, name, "positional", "")

    left, gate, up = 2.2, 7.9, 12.8
    mid = (gate + up) / 2
    rows = (1.5, 3.1, 5.3)  # first linear layers, activation, last linear layer
    linear(left, rows[0], "linear", relu_ffn, "w_1")
    activation(left, rows[1], "ReLU")
    linear(left, rows[2], "linear", relu_ffn, "w_2")
    _arrow(ax, [(left, 0.4), (left, rows[0] - 0.4)])
    for low, high in zip(rows, rows[1:]):
        _arrow(ax, [(left, low + 0.4), (left, high - 0.4)])
    _arrow(ax, [(left, rows[2] + 0.4), (left, 6.5)])
    linear(gate, rows[0], "gate", swiglu, "w_gate")
    activation(gate, rows[1], "SiLU")
    linear(up, rows[0], "up", swiglu, "w_up")
    linear(mid, rows[2], "down", swiglu, "w_down")
    meet = 4.25  # where the gate and the up projection multiply
    ax.text(mid, meet, "⊙", ha="center", va="center", fontsize=18)
    _arrow(ax, [(mid, 0.4), (mid, 0.75), (gate, 0.75), (gate, rows[0] - 0.4)])
    _arrow(ax, [(mid, 0.75), (up, 0.75), (up, rows[0] - 0.4)])
    _arrow(ax, [(gate, rows[0] + 0.4), (gate, rows[1] - 0.4)])
    _arrow(ax, [(gate, rows[1] + 0.4), (gate, meet), (mid - 0.3, meet)])
    _arrow(ax, [(up, rows[0] + 0.4), (up, meet), (mid + 0.3, meet)])
    _arrow(ax, [(mid, meet + 0.3), (mid, rows[2] - 0.4)])
    _arrow(ax, [(mid, rows[2] + 0.4), (mid, 6.5)])
    d_model = relu_ffn.w_1.weight.shape[1]
    for x in (left, mid):
        ax.text(x, 0.15, f"x (d_model = {d_model})", ha="center", fontsize=9)
        ax.text(x, 6.7, f"output ({d_model})", ha="center", fontsize=9)
    ax.text(left, 7.2, "The paper: two matrices", ha="center", fontsize=10)
    ax.text(mid, 7.2, "SwiGLU: three matrices and a gate", ha="center", fontsize=10)
    return fig
