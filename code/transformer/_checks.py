"""Argument checks shared by every module: fail early, name what was wrong.

Each helper raises ``TypeError`` for the wrong kind of object and
``ValueError`` for the wrong shape or value. Messages always name the
argument, what was expected and what was received, so that bad input never
surfaces as a cryptic error deep inside a matmul. :mod:`transformer._contract`
decides when they run: once per call path, and not at all when turned off.
"""

from __future__ import annotations

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


def check_mask(
    name: str, mask: object, target: Sequence[int], expected: str
) -> torch.Tensor:
    """Check that ``mask`` is boolean and broadcasts to ``target``.

    Args:
        name: The argument's name, used in the error message.
        mask: The mask to check; ``True`` means "may attend".
        target: The shape the mask must broadcast to, e.g. ``(B, h, L, S)``.
        expected: ``target`` in shape letters, e.g. ``"(B, h, L, S)"``.

    Returns:
        ``mask``, unchanged.

    Raises:
        TypeError: If ``mask`` is not a boolean tensor.
        ValueError: If ``mask`` does not broadcast to ``target``.
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(
            f"{name} must be a boolean torch.Tensor, got {type(mask).__name__}"
        )
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a boolean tensor (True = may attend), "
            f"got dtype {mask.dtype}; "
            f"convert a 0/1 mask with `{name}.bool()`"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, tuple(target))
    except RuntimeError:
        broadcast = None
    if broadcast != tuple(target):
        raise ValueError(
            f"{name} must broadcast to {expected} = {shape_str(target)}, "
            f"got shape {shape_str(mask.shape)}"
        )
    return mask


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
    """Check that ``value`` is a positive real number and return it as a float.

    Raises:
        TypeError: If ``value`` is not a number.
        ValueError: If ``value`` is not positive.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a positive float, got {type(value).__name__}")
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


def check_sequence(
    name: str, x: object, d_model: int, expected: str = "(B, L, d_model)"
) -> torch.Tensor:
    """Check that ``x`` is a batch of sequences of ``d_model``-wide vectors.

    Args:
        name: The argument's name, used in the error message.
        x: The object to check.
        d_model: The required last dimension.
        expected: The expected shape in shape letters.

    Returns:
        ``x``, unchanged.

    Raises:
        TypeError: If ``x`` is not a floating-point tensor.
        ValueError: If ``x`` is not three-dimensional, is empty, or its last
            dimension is not ``d_model``.
    """
    x = check_tensor(name, x, ndim=3, expected=expected)
    if not x.dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating-point tensor of shape {expected}, "
            f"got dtype {x.dtype}"
        )
    return check_last_dim(name, x, d_model, expected)


def check_token_ids(
    name: str, ids: object, V: int, max_len: int | None = None
) -> torch.Tensor:
    """Check that ``ids`` is a ``(B, L)`` batch of token ids in ``[0, V)``.

    Args:
        name: The argument's name, used in the error message.
        ids: The object to check.
        V: The vocabulary size.
        max_len: The longest ``L`` allowed, or ``None`` for any.

    Returns:
        ``ids``, unchanged.

    Raises:
        TypeError: If ``ids`` is not a ``torch.long`` or ``torch.int32`` tensor.
        ValueError: If ``ids`` is not two-dimensional, is empty, is longer
            than ``max_len``, or holds an id outside ``[0, V)``.
    """
    check_id_tensor(name, ids, max_len)
    check_id_range((name, ids, V))
    return ids


ID_DTYPES = (torch.long, torch.int32)
"""The dtypes an embedding lookup accepts for token ids."""


def check_id_tensor(name: str, ids: object, max_len: int | None = None) -> None:
    """Check the type and shape of a ``(B, L)`` batch of token ids, not their values.

    Raises:
        TypeError: If ``ids`` is not a ``torch.long`` or ``torch.int32`` tensor.
        ValueError: If ``ids`` is not ``(B, L)``, is empty, or ``L > max_len``.
    """
    check_tensor(name, ids, ndim=2, expected="(B, L)")
    if ids.dtype not in ID_DTYPES:
        raise TypeError(
            f"{name} must hold integer token ids (torch.long), got dtype {ids.dtype}; "
            f"convert with `{name}.long()` (torch.int32 also works)"
        )
    if max_len is not None and ids.shape[1] > max_len:
        raise ValueError(
            f"{name} must have shape (B, L) with L <= max_len = {max_len}, "
            f"got shape {shape_str(ids.shape)}"
        )


def check_id_range(*items: tuple[str, torch.Tensor, int]) -> None:
    """Check that every id is in ``[0, V)``, for several ``(name, ids, V)`` at once.

    The bounds of all the tensors are read in one transfer, so a model on a GPU
    waits for the device once per forward pass, not once per tensor.

    Raises:
        ValueError: If an id is outside its ``[0, V)``.
    """
    bounds = [b.long() for _, ids, _ in items for b in ids.aminmax()]
    bounds = torch.stack(bounds).tolist()
    for k, (name, ids, V) in enumerate(items):
        low, high = bounds[2 * k], bounds[2 * k + 1]
        if low < 0 or high >= V:
            raise ValueError(
                f"{name} must hold token ids in [0, V) = [0, {V}), got "
                f"{low if low < 0 else high} in a tensor of shape "
                f"{shape_str(ids.shape)}"
            )
