"""Evaluation mode for a block of code: no dropout inside, the old mode after.

Measuring, decoding and inspecting a model all want it in evaluation mode
(dropout off) and then back in the mode they found it in, even when the
measurement fails. :func:`evaluating` is that pattern, written once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch.nn as nn


@contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """Put ``model`` in evaluation mode inside a ``with`` block, then restore its mode.

    The mode is restored even when the block raises. Like ``model.train(mode)``,
    restoring sets every submodule to the model's own mode.

    Args:
        model: The model.

    Yields:
        ``model``, in evaluation mode.
    """
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
