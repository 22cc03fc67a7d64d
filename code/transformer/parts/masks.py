"""Boolean attention masks. Convention everywhere: ``True`` = may attend.

Masks broadcast against attention scores of shape ``(B, h, L, S)``, so they
can be combined with ``&``: ``causal_mask(L) & padding_mask(lengths)`` is a
``(B, 1, L, L)`` mask that hides both the future and the padding.
``prefix_lm_mask`` is the mask of a decoder that reads a whole prompt before
answering causally. ``CAUSAL`` stands for the causal mask without building
it, so that PyTorch's fused kernels can skip the blocked half.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..checks.masks import check_lengths
from ..checks.tensors import check_positive_int


def causal_mask(L: int, *, device: torch.device | str | None = None) -> torch.Tensor:
    """Return the mask that lets position ``i`` attend to positions ``0..i`` only.

    Args:
        L: Sequence length.
        device: Device of the returned tensor.

    Returns:
        A boolean tensor, ``True`` on and below the diagonal (may attend) and
        ``False`` above it (the future, blocked).

    Shape:
        ``(L, L)``, which broadcasts to ``(B, h, L, L)``.

    Raises:
        TypeError: If ``L`` is not an int.
        ValueError: If ``L`` is not positive.
    """
    check_positive_int("L", L)
    return torch.ones(L, L, dtype=torch.bool, device=device).tril()


def padding_mask(
    lengths: torch.Tensor | Sequence[int], S: int | None = None
) -> torch.Tensor:
    """Return the key-padding mask for sequences of the given true lengths.

    Position ``j`` of sequence ``b`` may be attended to when
    ``j < lengths[b]``; the positions after it are padding.

    Args:
        lengths: True length of each sequence in the batch.
        S: Padded length. Defaults to ``max(lengths)``.

    Returns:
        A boolean tensor, ``True`` at real tokens and ``False`` at padding.

    Shape:
        - lengths: ``(B,)``
        - output: ``(B, 1, 1, S)``, which broadcasts to ``(B, h, L, S)``.
          For single-head scores of shape ``(B, L, S)`` use ``mask[:, 0]``.

    Raises:
        TypeError: If ``lengths`` is not a sequence of integers.
        ValueError: If ``lengths`` is empty, not one-dimensional, negative, or
            longer than ``S``.
    """
    check_lengths(lengths, S)
    lengths = torch.as_tensor(lengths)
    if S is None:
        S = max(int(lengths.max()), 1)
    # (S,)
    positions = torch.arange(S, device=lengths.device)
    # (B, S)
    mask = positions < lengths[:, None]
    # (B, 1, 1, S)
    return mask[:, None, None, :]


def prefix_lm_mask(
    prefix_lengths: Sequence[int] | torch.Tensor, L: int
) -> torch.Tensor:
    """Return a mask that shows every position the whole prefix, and the rest causally.

    Query ``i`` of row ``b`` may attend to key ``j`` when ``j < prefix_lengths[b]``
    (the prefix, all of it) or ``j <= i`` (the past).

    Args:
        prefix_lengths: Length of each row's prefix.
        L: Sequence length.

    Returns:
        A boolean mask, ``True`` = may attend.

    Shape:
        - prefix_lengths: ``(B,)``
        - output: ``(B, 1, L, L)``

    Raises:
        TypeError: If ``L`` or a length is not an int.
        ValueError: If ``L`` is not positive or a length is negative or above ``L``.
    """
    check_positive_int("L", L)
    # (B, 1, 1, L)
    prefix = padding_mask(prefix_lengths, L)
    # (B, 1, L, L)
    return prefix | causal_mask(L, device=prefix.device)


class CausalMask:
    """The causal mask, not built: query ``i`` of ``L`` sees keys ``0..i + S - L``.

    Pass :data:`CAUSAL` where a mask goes and the attention needs no
    ``(L, S)`` tensor: PyTorch's fused kernel gets ``is_causal=True`` when
    ``L == S`` and no mask at all when ``L == 1``. The queries are the last
    ``L`` of the ``S`` positions, so with ``L == S`` it is :func:`causal_mask`.
    """

    is_causal = True

    def __repr__(self) -> str:
        return "CAUSAL"


CAUSAL = CausalMask()
"""A causal mask that is never built, the one instance of ``CausalMask``."""


def mask_tensor(
    mask: torch.Tensor | CausalMask | None,
    L: int,
    S: int,
    *,
    device: torch.device | str | None = None,
) -> torch.Tensor | None:
    """Return ``mask`` as a boolean tensor: :data:`CAUSAL` becomes ``(L, S)``.

    Shape:
        - output: ``(L, S)`` for :data:`CAUSAL`, else ``mask`` unchanged
    """
    if mask is not CAUSAL:
        return mask
    # (L, S): the last L rows of the causal mask of S positions
    return causal_mask(S, device=device)[S - L :]
