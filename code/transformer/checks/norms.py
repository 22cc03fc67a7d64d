"""The checks of the norms and of Add & Norm."""

from __future__ import annotations

from .contract import contract
from .tensors import (
    check_float,
    check_last_dim,
    check_like,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_sequence,
    check_tensor,
)


def check_norm_sizes(d_model: object, eps: object) -> None:
    """Check a norm's width (a positive int) and ``eps`` (a positive number)."""
    check_positive_int("d_model", d_model)
    check_positive_float("eps", eps)


def check_add_norm_options(
    d_model: object, dropout: object, norm_first: object, norm: object
) -> None:
    """Check the options of an Add & Norm block."""
    check_positive_int("d_model", d_model)
    check_probability("dropout", dropout)
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be a bool, got {type(norm_first).__name__}")
    if norm is not None and getattr(norm, "d_model", d_model) != d_model:
        raise ValueError(
            f"norm must normalise d_model={d_model} features, got {norm!r}"
        )


@contract
def check_layer_norm(norm: object, x: object) -> None:
    """Check the argument of a norm's ``forward``: ``(..., d_model)`` features."""
    check_tensor("x", x, min_ndim=1, expected="(..., d_model)")
    check_float("x", x, "(..., d_model)")
    check_last_dim("x", x, norm.d_model, "(..., d_model)")
    check_like("x", x, norm.weight, "the module's weights")


@contract
def check_add_norm(add_norm: object, x: object, sublayer: object) -> None:
    """Check the arguments of Add & Norm's ``forward``: a sequence, a callable."""
    check_sequence("x", x, add_norm.norm.d_model, weight=add_norm.norm.weight)
    if not callable(sublayer):
        raise TypeError(f"sublayer must be callable, got {type(sublayer).__name__}")
