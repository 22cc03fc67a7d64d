"""Checks of positional information: the tables' sizes, and the positions asked for.

The positional modules of ``transformer.parts.positional`` add rows of a
``(max_len, d_model)`` table; ``transformer.parts.rotary`` rotates queries and
keys by angles read from ``(max_len, d_k / 2)`` tables. Either way a sequence
of ``L`` tokens whose first has position ``start`` needs ``start + L <= max_len``.
"""

from __future__ import annotations

import torch

from .contract import contract
from .tensors import (
    check_float,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_sequence,
    check_tensor,
    shape_str,
)


def check_positional_args(
    d_model: object, max_len: object, dropout: object, *, even: bool = False
) -> None:
    """Check the arguments a table of positions is built with.

    Args:
        d_model: Width of the embeddings; a positive int, and even with ``even``.
        max_len: Number of positions in the table; a positive int.
        dropout: Dropout probability, in ``[0, 1)``.
        even: Require an even ``d_model`` (sine and cosine pairs).

    Raises:
        TypeError: If a size is not an int or ``dropout`` not a number.
        ValueError: If a size is not positive, ``d_model`` is odd when it must
            be even, or ``dropout`` is outside ``[0, 1)``.
    """
    check_positive_int("d_model", d_model)
    check_positive_int("max_len", max_len)
    if even and d_model % 2:
        raise ValueError(f"d_model must be even (sine and cosine pairs), got {d_model}")
    check_probability("dropout", dropout)


def check_start(start: object) -> None:
    """Check that ``start``, the position of the first token, is an int ``>= 0``.

    Raises:
        TypeError: If ``start`` is not an int or is negative.
    """
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise TypeError(f"start must be an int >= 0, got {start!r}")


@contract
def check_positional_input(x: object, start: object, table: torch.Tensor) -> None:
    """Check that ``x`` is ``(B, L, d_model)`` with ``start + L <= max_len``.

    Args:
        x: The embeddings the positions are added to.
        start: The position of the first token of ``x``.
        table: The ``(max_len, d_model)`` table of positions; ``x`` must have
            its dtype and device.

    Raises:
        TypeError: If ``x`` is not a floating-point tensor of the table's
            dtype, or ``start`` is not an int ``>= 0``.
        ValueError: If ``x`` has the wrong shape or device, or
            ``start + L > max_len``.
    """
    max_len, d_model = table.shape
    check_sequence("x", x, d_model, weight=table)
    check_start(start)
    L = x.shape[1] + start
    if L > max_len:
        raise ValueError(
            f"x has sequence length L={L}, longer than max_len={max_len}: "
            f"expected shape (B, L <= {max_len}, d_model); "
            "build the module with a larger max_len"
        )


@contract
def check_dropout_input(x: object, start: object) -> None:
    """Check a ``(B, L, d_model)`` floating-point ``x`` and its ``start`` position.

    Raises:
        TypeError: If ``x`` is not a floating-point tensor, or ``start`` is
            not an int ``>= 0``.
        ValueError: If ``x`` is not three-dimensional or is empty.
    """
    check_tensor("x", x, ndim=3, expected="(B, L, d_model)")
    check_float("x", x, "(B, L, d_model)")
    check_start(start)


def check_rotary_args(d_k: object, max_len: object, base: object) -> None:
    """Check the arguments rotary position embeddings are built with.

    Raises:
        TypeError: If a size is not an int or ``base`` not a number.
        ValueError: If a size or ``base`` is not positive, or ``d_k`` is odd.
    """
    check_positive_int("d_k", d_k)
    check_positive_int("max_len", max_len)
    check_positive_float("base", base)
    if d_k % 2:
        raise ValueError(f"d_k must be even (features turn in pairs), got {d_k}")


@contract
def check_rotary_input(rope: object, x: object, offset: object) -> None:
    """Check queries or keys ``(B, h, L, d_k)`` to rotate from position ``offset``.

    Args:
        rope: The rotary embedding, read for ``rope.d_k`` and ``rope.max_len``.
        x: Queries or keys of every head.
        offset: Position of the first row of ``x``.

    Raises:
        TypeError: If ``x`` is not a tensor or ``offset`` not an int.
        ValueError: If ``x`` is not a floating-point ``(B, h, L, d_k)``,
            ``offset`` is negative, or the positions run past ``max_len``.
    """
    d_k, max_len = rope.d_k, rope.max_len
    check_tensor("x", x, ndim=4, expected="(B, h, L, d_k)")
    if not x.dtype.is_floating_point or x.shape[-1] != d_k:
        raise ValueError(
            f"x must be a floating-point tensor of shape (B, h, L, d_k) with "
            f"d_k={d_k}, got {x.dtype} of shape {shape_str(x.shape)}"
        )
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an int, got {type(offset).__name__}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    L = x.shape[2]
    if offset + L > max_len:
        raise ValueError(
            f"positions offset + L = {offset} + {L} run past max_len={max_len}: "
            f"x has shape {shape_str(x.shape)}; build the module with a larger max_len"
        )
