"""Measure how gradients flow through a stack of layers, without training it.

Deep stacks train well only when the gradient of the loss reaches every
layer at a useful size. :func:`layer_gradient_norms` runs an input through a
list of layers, backpropagates a loss once, and reports the gradient's size
at every layer boundary and at every layer's parameters. The Add & Norm
chapter uses it to compare stacks with and without residual connections, and
post-norm with pre-norm blocks, at initialisation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn as nn

from ..checks.training import check_gradient_norm_args, check_scalar_loss


@dataclass(frozen=True)
class GradientNorms:
    """The gradient's size at every boundary and every layer of a stack of ``N`` layers.

    Attributes:
        at_boundaries: Shape ``(N + 1,)``. Entry ``n`` is the norm of the loss's
            gradient with respect to ``x_n``, the tensor entering layer ``n``;
            the last entry belongs to ``x_N``, the output of the last layer.
        per_layer: Shape ``(N,)``. Entry ``n`` is the norm of the gradient
            with respect to all of layer ``n``'s parameters together (the
            square root of the sum of their squared entries); zero for a layer
            without parameters.
    """

    at_boundaries: torch.Tensor
    per_layer: torch.Tensor


def layer_gradient_norms(
    layers: Sequence[nn.Module],
    x: torch.Tensor,
    loss_fn: Callable[[torch.Tensor], torch.Tensor],
    *,
    step: Callable[[nn.Module, torch.Tensor], torch.Tensor] | None = None,
) -> GradientNorms:
    """Run ``x`` through ``layers``, differentiate ``loss_fn``, measure the gradients.

    The gradients are computed with ``torch.autograd.grad``: the layers'
    ``.grad`` attributes are neither read nor changed, and ``x`` itself does
    not need to require a gradient.

    Args:
        layers: The ``N`` layers, applied in order, e.g. ``encoder.layers``.
        x: The input of the first layer.
        loss_fn: Maps the last layer's output to a scalar loss. Anything that
            follows the layers (a final norm, an output projection) belongs here.
        step: How one layer is applied, ``step(layer, x_n) -> x_{n + 1}``;
            ``None`` means ``layer(x_n)``. Use it to pass masks or memory, or
            to wrap each layer, e.g. ``lambda f, x: x + f(x)`` for a residual
            connection.

    Returns:
        The gradient norms at the ``N + 1`` boundaries and the ``N`` layers.

    Raises:
        TypeError: If ``x`` is not a tensor, a layer is not an ``nn.Module``, or
            the loss is not a scalar tensor.
        ValueError: If ``layers`` is empty.
    """
    check_gradient_norm_args(layers, x)
    boundaries = [x.detach().requires_grad_(True)]  # x_0 .. x_N
    for layer in layers:
        x_n = boundaries[-1]
        boundaries.append(layer(x_n) if step is None else step(layer, x_n))
    loss = loss_fn(boundaries[-1])
    check_scalar_loss(loss)
    params = [[p for p in layer.parameters() if p.requires_grad] for layer in layers]
    flat = [p for group in params for p in group]
    grads = torch.autograd.grad(loss, boundaries + flat, allow_unused=True)
    activation_grads, param_grads = (
        grads[: len(boundaries)],
        iter(grads[len(boundaries) :]),
    )

    def squared(g: torch.Tensor | None) -> float:
        return 0.0 if g is None else g.detach().double().pow(2).sum().item()

    # (N + 1,)
    at_boundaries = torch.tensor([squared(g) for g in activation_grads]).sqrt()
    per_layer = [sum(squared(next(param_grads)) for _ in group) for group in params]
    # (N,)
    return GradientNorms(at_boundaries, torch.tensor(per_layer).sqrt())
