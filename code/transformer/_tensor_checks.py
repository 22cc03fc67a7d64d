"""Checks of the tensors a module receives: sequences, masks and token ids.

Like those of :mod:`transformer._checks`, whose helpers they build on, their
messages name the argument, the expected shape and the shape received.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._checks import check_last_dim, check_tensor, shape_str


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
    if device is not None and mask.device != device:
        raise ValueError(
            f"{name} must be on the device of the inputs, {device}, got {mask.device}; "
            f"move it with `{name}.to('{device}')`"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, tuple(target))
    except RuntimeError:
        broadcast = None
    hint = ""
    if len(target) == 4 and mask.dim() == 3:
        hint = f"; give a (B, L, S) mask its head axis: `{name}[:, None]`"
    elif len(target) == 4 and batched and mask.dim() < 4:
        hint = f"; a (B, S) padding mask needs `{name}[:, None, None, :]`"
    if broadcast != tuple(target) or hint:
        raise ValueError(
            f"{name} must broadcast to {expected} = {shape_str(target)}, "
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
    if x.device != weight.device:
        raise ValueError(
            f"{name} must be on the device of {owner}, {weight.device}, "
            f"got {x.device}; move it with `{name}.to('{weight.device}')`"
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
    if device is not None and ids.device != device:
        raise ValueError(
            f"{name} must be on the device of the model's weights, {device}, "
            f"got {ids.device}; move it with `{name}.to('{device}')`"
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
