"""Where a model computes: the device of its weights, where its inputs must go.

Every routine that takes a model makes its tensors there, so that
``model.to("cuda")`` is all a reader changes to train, measure or generate
on a GPU.
"""

from __future__ import annotations

import torch
import torch.nn as nn


def device_of(model: nn.Module) -> torch.device:
    """Return the device of ``model``'s weights (the CPU for a model without any)."""
    weight = next(model.parameters(), None)
    return torch.device("cpu") if weight is None else weight.device


def dtype_of(model: nn.Module) -> torch.dtype:
    """Return the dtype of ``model``'s floating-point weights (float32 without any)."""
    weights = (p for p in model.parameters() if p.is_floating_point())
    weight = next(weights, None)
    return torch.float32 if weight is None else weight.dtype
