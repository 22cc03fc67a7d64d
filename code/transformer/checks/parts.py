"""Checks of the parts that work on each position alone.

The token embedding, the feed-forward networks (the paper's and SwiGLU) and
RMSNorm: the sizes they are built with, and the input of their ``forward``.
The checks read what they need from the module's attributes (``d_model``,
``V``, its parameters), so they import nothing from ``transformer.parts``.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import nn

from .contract import contract
from .ids import check_token_ids
from .tensors import (
    check_choice,
    check_last_dim,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_sequence,
    check_tensor,
)


def check_sizes(**sizes: object) -> None:
    """Check that every size, named by its keyword, is a positive int.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive.
    """
    for name, value in sizes.items():
        check_positive_int(name, value)


def check_embedding_args(V: object, d_model: object, scale: object) -> None:
    """Check the sizes of a token embedding and its ``scale`` switch.

    Raises:
        TypeError: If a size is not an int or ``scale`` not a bool.
        ValueError: If a size is not positive.
    """
    check_sizes(V=V, d_model=d_model)
    if not isinstance(scale, bool):
        raise TypeError(f"scale must be a bool, got {type(scale).__name__}")


def check_feedforward_args(
    d_model: object,
    d_ff: object,
    dropout: object,
    activation: object = None,
    activations: Sequence[str] = (),
) -> None:
    """Check the arguments a feed-forward network is built with.

    Args:
        d_model: Width of the inputs and outputs; a positive int.
        d_ff: Hidden width; a positive int.
        dropout: Dropout probability, in ``[0, 1)``.
        activation: The activation's name, one of ``activations``; not
            checked when ``activations`` is empty.
        activations: The names allowed for ``activation``.

    Raises:
        TypeError: If a size is not an int, ``dropout`` not a number or
            ``activation`` not a string.
        ValueError: If a size is not positive, ``dropout`` is outside
            ``[0, 1)`` or ``activation`` is unknown.
    """
    check_sizes(d_model=d_model, d_ff=d_ff)
    if activations:
        check_choice("activation", activation, activations)
    check_probability("dropout", dropout)


@contract
def check_feedforward_input(ffn: nn.Module, x: object) -> None:
    """Check that ``x`` is a ``(B, L, d_model)`` sequence ``ffn`` can take.

    ``x`` must have ``ffn.d_model`` features and the dtype and device of the
    network's first weight.

    Raises:
        TypeError: If ``x`` is not a floating-point tensor of the weights' dtype.
        ValueError: If ``x`` is not ``(B, L, d_model)``, is empty, or is on
            another device than the weights.
    """
    check_sequence("x", x, ffn.d_model, weight=next(ffn.parameters()))


def check_rms_norm_args(d_model: object, eps: object) -> None:
    """Check the arguments RMSNorm is built with.

    Raises:
        TypeError: If ``d_model`` is not an int or ``eps`` not a number.
        ValueError: If ``d_model`` or ``eps`` is not positive.
    """
    check_positive_int("d_model", d_model)
    check_positive_float("eps", eps)


@contract
def check_rms_norm_input(norm: nn.Module, x: object) -> None:
    """Check that ``x`` is a tensor of shape ``(..., d_model)``, ``norm.d_model`` wide.

    Raises:
        TypeError: If ``x`` is not a tensor.
        ValueError: If ``x`` is empty or its last axis is not ``d_model``.
    """
    check_tensor("x", x, min_ndim=1, expected="(..., d_model)")
    check_last_dim("x", x, norm.d_model, "(..., d_model)")


@contract
def check_embedding_input(embedding: nn.Module, ids: object) -> None:
    """Check ``(B, L)`` token ids in ``[0, V)`` on the device of the embedding.

    Raises:
        TypeError: If ``ids`` is not a tensor of integers.
        ValueError: If ``ids`` is not ``(B, L)``, is empty, is on another
            device than the table, or holds an id outside ``[0, V)``.
    """
    check_token_ids("ids", ids, embedding.V, device=embedding.weight.device)
