"""Argument checks shared by every module: fail early, name what was wrong.

Each helper raises ``TypeError`` for the wrong kind of object and
``ValueError`` for the wrong shape or value. Messages always name the
argument, what was expected and what was received, so that bad input never
surfaces as a cryptic error deep inside a matmul. The checks of token ids
are in ``transformer.checks.ids``. :mod:`transformer.checks.contract`
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
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive float, and finite, got {value}")
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


def check_mask(
    name: str,
    mask: object,
    target: Sequence[int],
    expected: str,
    *,
    device: torch.device | None = None,
    batched: bool = False,
) -> torch.Tensor:
    """Check that ``mask`` is boolean, on ``device``, and broadcasts to ``target``.

    A mask broadcasts from the right, so a mask with fewer dimensions than
    ``target`` lines up with its last ones: a 2-D mask is read as ``(L, S)``,
    the same for every sequence and head. A ``(B, S)`` padding mask would
    therefore be read as ``(L, S)``, silently when ``B == L``; and a 3-D
    ``(B, L, S)`` mask would put the batch on the head axis. So a 3-D mask is
    rejected wherever a 4-D one is expected, and with ``batched`` (a mask that
    differs between sequences, such as a source mask) so is a 2-D one.

    Args:
        name: The argument's name, used in the error message.
        mask: The mask to check; ``True`` means "may attend".
        target: The shape the mask must broadcast to, e.g. ``(B, h, L, S)``.
        expected: ``target`` in shape letters, e.g. ``"(B, h, L, S)"``.
        device: The device of the tensors the mask goes with, if known.
        batched: Require all the dimensions of ``target``.

    Returns:
        ``mask``, unchanged.

    Raises:
        TypeError: If ``mask`` is not a boolean tensor.
        ValueError: If ``mask`` is on another device or does not broadcast to
            ``target``, or has too few dimensions to be unambiguous.
    """
    if not isinstance(mask, torch.Tensor):
        kind = type(mask).__name__
        raise TypeError(f"{name} must be a boolean torch.Tensor, got {kind}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a boolean tensor (True = may attend), "
            f"got dtype {mask.dtype}; convert a 0/1 mask with `{name}.bool()`"
        )
    check_device(name, mask, device, "the inputs")
    try:
        broadcast = torch.broadcast_shapes(mask.shape, tuple(target))
    except RuntimeError:
        broadcast = None
    rule, hint = "must broadcast to", ""
    if len(target) == 4 and batched and mask.dim() < 4:
        rule = "must be 4-D and broadcast to"
        hint = f"; a (B, S) padding mask needs `{name}[:, None, None, :]`"
    if len(target) == 4 and mask.dim() == 3:
        hint = f"; give a (B, L, S) mask its head axis: `{name}[:, None]`"
    if broadcast != tuple(target) or hint:
        raise ValueError(
            f"{name} {rule} {expected} = {shape_str(target)}, "
            f"got shape {shape_str(mask.shape)}{hint}"
        )
    return mask


def check_float(name: str, x: torch.Tensor, expected: str) -> None:
    """Raise ``TypeError`` unless ``x`` holds floating-point numbers."""
    if not x.dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating-point tensor of shape {expected}, "
            f"got dtype {x.dtype}"
        )


def check_like(name: str, x: torch.Tensor, weight: torch.Tensor, owner: str) -> None:
    """Check that ``x`` has the dtype and device of ``weight``, the owner's weights.

    Raises:
        TypeError: If the dtypes differ.
        ValueError: If the devices differ.
    """
    if x.dtype != weight.dtype:
        raise TypeError(
            f"{name} must have the dtype of {owner}, {weight.dtype}, got {x.dtype}; "
            f"convert it with `{name}.to({weight.dtype})`, or the module with "
            f"`.to({x.dtype})`"
        )
    check_device(name, x, weight.device, owner)


def check_device(
    name: str, x: torch.Tensor, device: torch.device | None, of: str
) -> None:
    """Raise ValueError (saying how to move it) unless ``x`` is on ``device``."""
    if device is not None and x.device != device:
        raise ValueError(
            f"{name} must be on the device of {of}, {device}, got {x.device}; "
            f"move it with `{name}.to('{device}')`"
        )


def check_sequence(
    name: str,
    x: object,
    d_model: int,
    expected: str = "(B, L, d_model)",
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Check that ``x`` is a batch of sequences of ``d_model``-wide vectors.

    Args:
        name: The argument's name, used in the error message.
        x: The object to check.
        d_model: The required last dimension.
        expected: The expected shape in shape letters.
        weight: A weight of the module ``x`` goes into; ``x`` must have its
            dtype and device.

    Returns:
        ``x``, unchanged.

    Raises:
        TypeError: If ``x`` is not a floating-point tensor, or its dtype is
            not ``weight``'s.
        ValueError: If ``x`` is not three-dimensional, is empty, its last
            dimension is not ``d_model``, or it is on another device than
            ``weight``.
    """
    x = check_tensor(name, x, ndim=3, expected=expected)
    if not x.dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating-point tensor of shape {expected}, "
            f"got dtype {x.dtype}"
        )
    check_last_dim(name, x, d_model, expected)
    if weight is not None:
        check_like(name, x, weight, "the module's weights")
    return x
