"""Checks of token ids: their dtype, shape and device, and their range, read once.

Like those of ``transformer.checks.tensors``, whose helpers they build on, their
messages name the argument, the expected shape and the shape received.
"""

from __future__ import annotations

import torch

from .tensors import check_device, check_tensor, shape_str


def check_token_ids(
    name: str,
    ids: object,
    V: int,
    max_len: int | None = None,
    device: torch.device | None = None,
) -> torch.Tensor:
    """Check that ``ids`` is a ``(B, L)`` batch of token ids in ``[0, V)``.

    Args:
        name: The argument's name, used in the error message.
        ids: The object to check.
        V: The vocabulary size.
        max_len: The longest ``L`` allowed, or ``None`` for any.
        device: The device ``ids`` must be on, or ``None`` for any.

    Returns:
        ``ids``, unchanged.

    Raises:
        TypeError: If ``ids`` is not a ``torch.long`` or ``torch.int32`` tensor.
        ValueError: If ``ids`` is not two-dimensional, is empty, is longer
            than ``max_len``, or holds an id outside ``[0, V)``.
    """
    check_id_tensor(name, ids, max_len, device)
    check_id_range((name, ids, V))
    return ids


ID_DTYPES = (torch.long, torch.int32)
"""The dtypes an embedding lookup accepts for token ids."""


def check_id_tensor(
    name: str,
    ids: object,
    max_len: int | None = None,
    device: torch.device | None = None,
) -> None:
    """Check the type, shape and device of a ``(B, L)`` batch of ids, not their values.

    Raises:
        TypeError: If ``ids`` is not a ``torch.long`` or ``torch.int32`` tensor.
        ValueError: If ``ids`` is not ``(B, L)``, is empty, ``L > max_len``, or
            ``ids`` is not on ``device``, the device of the model's weights.
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
    check_device(name, ids, device, "the model's weights")


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
