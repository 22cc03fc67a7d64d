"""Checks of the attention explorer's arguments: the model, the run, the names.

Each names the argument, what was expected and what was received.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch.nn as nn


def check_capture_args(model: object, forward: object) -> None:
    """Check that ``model`` is a module and ``forward`` can be called."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not callable(forward):
        raise TypeError(f"forward must be callable, got {type(forward).__name__}")


def check_has_attention(model: nn.Module, attention_modules: object) -> None:
    """Raise ``ValueError`` when ``model`` holds no attention module to record."""
    if not attention_modules:
        raise ValueError(
            f"model must contain a MultiHeadAttention, {type(model).__name__} has none"
        )


def check_explorer_args(title: object, digits: object) -> None:
    """Check the title (a string) and the decimals kept (an int >= 0) of an explorer."""
    if not isinstance(title, str):
        raise TypeError(f"title must be a string, got {type(title).__name__}")
    if not isinstance(digits, int) or isinstance(digits, bool):
        raise TypeError(f"digits must be an int, got {type(digits).__name__}")
    if digits < 0:
        raise ValueError(f"digits must be at least 0, got {digits}")


def check_example_names(
    name: str,
    queries: Sequence[str],
    keys: Sequence[str],
    index: int,
    weights_shape: Sequence[int],
) -> None:
    """Check that the names fit ``(L, S)`` and ``index`` is in the batch ``B``.

    Args:
        name: The attention module's name, for the message.
        queries: One name per query position.
        keys: One name per key position.
        index: The sequence of the batch to show.
        weights_shape: The shape ``(B, h, L, S)`` of the module's weights.
    """
    B, _, L, S = weights_shape
    if (len(queries), len(keys)) != (L, S):
        raise ValueError(
            f"queries and keys must name (L, S) = ({L}, {S}) positions of "
            f"{name or 'the module'}, got ({len(queries)}, {len(keys)})"
        )
    if not 0 <= index < B:
        raise ValueError(f"index must be in [0, {B}) for a batch of {B}, got {index}")
