"""The checks of the inspection tools."""

from __future__ import annotations

import torch.nn as nn

from .tensors import check_positive_int


def check_trace_options(
    model: object, max_depth: object, exclude: tuple
) -> tuple[type[nn.Module], ...]:
    """Check what a shape trace records; return ``exclude`` as a tuple of classes.

    ``model`` is an ``nn.Module``, ``max_depth`` is ``None`` or an int >= 0, and
    ``exclude`` holds ``nn.Module`` subclasses.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
        raise ValueError(f"max_depth must be None or an int >= 0, got {max_depth!r}")
    if not all(isinstance(k, type) and issubclass(k, nn.Module) for k in exclude):
        raise TypeError(f"exclude must hold nn.Module classes, got {exclude!r}")
    return exclude


def check_kept_options(attend: object, L: object, d: object) -> None:
    """Check the arguments of ``kept_for_backward``: a callable and two sizes >= 1."""
    if not callable(attend):
        raise TypeError(f"attend must be callable, got {type(attend).__name__}")
    check_positive_int("L", L)
    check_positive_int("d", d)
