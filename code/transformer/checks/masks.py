"""Checks of what a mask is built from: the true lengths of padded sequences."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .tensors import check_mask, check_positive_int, shape_str


def check_lengths(lengths: object, S: object = None) -> None:
    """Check ``(B,)`` true lengths, each in ``[0, S]``, and the padded length ``S``.

    Args:
        lengths: The true length of each sequence: a tensor of integers or a
            sequence of ints.
        S: The padded length, or ``None`` for ``max(lengths)``.

    Raises:
        TypeError: If ``lengths`` is not a sequence of integers, or ``S`` is
            not an int.
        ValueError: If ``lengths`` is empty, not one-dimensional, negative, or
            longer than ``S``, or ``S`` is not positive.
    """
    if not isinstance(lengths, torch.Tensor):
        if not isinstance(lengths, Sequence) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in lengths
        ):
            raise TypeError(f"lengths must be a sequence of ints, got {lengths!r}")
        lengths = torch.tensor(list(lengths), dtype=torch.long)
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
    if lengths.dim() != 1 or lengths.numel() == 0:
        raise ValueError(
            f"lengths must have shape (B,) with B >= 1, got {shape_str(lengths.shape)}"
        )
    low, high = (int(b) for b in lengths.aminmax())
    if low < 0:
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    if S is not None:
        check_positive_int("S", S)
        if high > S:
            raise ValueError(f"lengths must be <= S = {S}, got {lengths.tolist()}")


def check_attention_mask(
    name: str,
    mask: object,
    target: tuple[int, ...],
    expected: str,
    *,
    device: torch.device | None = None,
) -> object:
    """Check a mask as :func:`check_mask` does, or accept ``CAUSAL``.

    ``CAUSAL`` (:class:`~transformer.parts.masks.CausalMask`) is the causal
    mask that is never built; it fits every ``(B, h, L, S)`` with ``L <= S``.
    """
    if getattr(type(mask), "is_causal", False) is True:
        return mask
    return check_mask(name, mask, target, expected, device=device)
