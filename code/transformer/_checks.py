"""Argument checks shared by every module: fail early, name what was wrong.

Each helper raises ``TypeError`` for the wrong kind of object and
``ValueError`` for the wrong shape or value. Messages always name the
argument, what was expected and what was received, so that bad input never
surfaces as a cryptic error deep inside a matmul. :mod:`transformer._contract`
decides when they run: once per call path, and not at all when turned off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def shape_str(shape: Sequence[int]) -> str:
    """Format a shape as ``(2, 3, 4)``."""
    dims = [str(int(s)) for s in shape]
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def check_tensor(
    name: str,
    x: object,
    *,
    ndim: int | Sequence[int] | None = None,
    min_ndim: int | None = None,
    expected: str = "",
) -> torch.Tensor:
    """Check that ``x`` is a tensor of the given rank and return it.

    Args:
        name: The argument's name, used in the error message.
        x: The object to check.
        ndim: Allowed number(s) of dimensions.
        min_ndim: Smallest allowed number of dimensions.
        expected: The expected shape in shape letters, e.g. ``"(B, L, d_model)"``.

    Returns:
        ``x``, unchanged.

    Raises:
        TypeError: If ``x`` is not a tensor.
        ValueError: If ``x`` has the wrong rank or an empty dimension.
    """
    hint = f" {expected}" if expected else ""
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of shape{hint}, got {type(x).__name__}"
        )
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim or ())
    if allowed and x.dim() not in allowed:
        dims = " or ".join(str(n) for n in allowed)
        raise ValueError(
            f"{name} must have {dims} dimensions{hint}, got shape {shape_str(x.shape)}"
        )
    if min_ndim is not None and x.dim() < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions{hint}, "
            f"got shape {shape_str(x.shape)}"
        )
    if x.numel() == 0:
        raise ValueError(
            f"{name} must not be empty{hint}, got shape {shape_str(x.shape)}"
        )
    return x


def check_positive_int(name: str, value: object) -> int:
    """Check that ``value`` is a positive ``int`` (not a bool) and return it.

    Raises:
        TypeError: If ``value`` is not an int.
        ValueError: If ``value`` is not positive.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be a positive int, got {type(value).__name__} {value!r}"
        )
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value}")
    return value


def check_probability(name: str, value: object) -> float:
    """Check that ``value`` is a float in ``[0, 1)`` and return it.

    Raises:
        TypeError: If ``value`` is not a number.
        ValueError: If ``value`` is outside ``[0, 1)``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {type(value).__name__}")
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return float(value)


def check_last_dim(
    name: str, x: torch.Tensor, size: int, expected: str
) -> torch.Tensor:
    """Check that the last dimension of ``x`` is ``size`` and return ``x``.

    Args:
        name: The argument's name, used in the error message.
        x: A tensor already checked by :func:`check_tensor`.
        size: The required size of the last dimension.
        expected: The expected shape in shape letters, e.g. ``"(B, L, d_model)"``.

    Raises:
        ValueError: If the last dimension of ``x`` is not ``size``.
    """
    if x.shape[-1] != size:
        raise ValueError(
            f"{name} must have shape {expected} with last dimension {size}, "
            f"got shape {shape_str(x.shape)}"
        )
    return x


def check_positive_float(name: str, value: object) -> float:
    """Check that ``value`` is a positive, finite real number; return it as a float.

    Raises:
        TypeError: If ``value`` is not a number.
        ValueError: If ``value`` is not positive, or is infinite or NaN.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a positive float, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a positive float, and finite, got {value}")
    if not float(value) > 0.0:
        raise ValueError(f"{name} must be a positive float, got {value}")
    return float(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """Check that ``value`` is one of the strings in ``choices`` and return it.

    Raises:
        TypeError: If ``value`` is not a string.
        ValueError: If ``value`` is not one of ``choices``.
    """
    options = " or ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {options}, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be {options}, got {value!r}")
    return value


def check_divisible(name: str, value: int, divisor_name: str, divisor: int) -> None:
    """Check that ``value`` is a multiple of ``divisor``.

    Raises:
        ValueError: If ``value % divisor != 0``.
    """
    if value % divisor != 0:
        raise ValueError(
            f"{name} must be divisible by {divisor_name}: got {name}={value}, "
            f"{divisor_name}={divisor} (remainder {value % divisor})"
        )
