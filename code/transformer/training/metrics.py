"""What training minimises and what it reports: loss and accuracy over real tokens.

Targets that hold PAD mark positions without a prediction to make (padding,
or the prompt of a decoder-only batch); every measure here leaves them out.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..checks.training import check_logits_and_targets
from ..data.batches import Batch
from ..data.placement import device_of
from ..data.tokenizer import PAD_ID
from .modes import evaluating


def sequence_loss(
    logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float = 0.0
) -> torch.Tensor:
    """Return the mean cross-entropy over the positions whose target is not PAD.

    Args:
        logits: The model's output.
        targets: The ids to predict; PAD means "no loss here".
        label_smoothing: Probability mass spread evenly over the vocabulary
            (the paper uses 0.1).

    Shape:
        - logits: ``(B, L, V)``
        - targets: ``(B, L)``
        - output: ``()``

    Raises:
        TypeError: If an input is not a tensor.
        ValueError: If the shapes do not fit together.
    """
    check_logits_and_targets(logits, targets)
    return F.cross_entropy(
        logits.flatten(0, 1),
        targets.flatten(),
        ignore_index=PAD_ID,
        label_smoothing=label_smoothing,
    )


def token_accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Return the fraction of non-PAD positions whose most likely token is the target.

    Shape:
        - logits: ``(B, L, V)``
        - targets: ``(B, L)``

    Raises:
        TypeError: If an input is not a tensor.
        ValueError: If the shapes do not fit together.
    """
    check_logits_and_targets(logits, targets)
    # (B, L)
    real = targets != PAD_ID
    return (logits.argmax(dim=-1) == targets)[real].float().mean().item()


def loss_and_accuracy(
    logits: torch.Tensor, targets: torch.Tensor
) -> tuple[float, float]:
    """Return the cross-entropy (no label smoothing) and the token accuracy, as floats.

    Shape:
        - logits: ``(B, L, V)``
        - targets: ``(B, L)``
    """
    return sequence_loss(logits, targets).item(), token_accuracy(logits, targets)


@torch.no_grad()
def _eval_logits(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Run ``model`` on ``batch`` in eval mode (no dropout), then restore its mode."""
    with evaluating(model):
        # (B, L, V)
        return batch.logits(model)


def evaluate(model: nn.Module, batch: Batch) -> tuple[float, float]:
    """Return ``(loss, token accuracy)`` of ``model`` on ``batch``, in eval mode."""
    batch = batch.to(device_of(model))
    return loss_and_accuracy(_eval_logits(model, batch), batch.targets)


def position_accuracy(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Return the token accuracy at each position, NaN where all targets are PAD.

    Shape:
        output: ``(L,)``
    """
    batch = batch.to(device_of(model))
    # (B, L)
    right = _eval_logits(model, batch).argmax(dim=-1) == batch.targets
    # (B, L)
    real = batch.targets != PAD_ID
    # (L,)
    return (right & real).sum(0) / real.sum(0)
