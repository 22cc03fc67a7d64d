"""What training minimises and what it reports: loss and accuracy over real tokens.

Targets that hold PAD mark positions without a prediction to make (padding,
or the prompt of a decoder-only batch); every measure here leaves them out.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..checks.ids import check_id_range
from ..checks.tensors import check_device, check_float, check_tensor
from ..data.batches import Batch
from ..data.tokenizer import PAD_ID


def _check_pair(logits: object, targets: object) -> None:
    """Check logits ``(B, L, V)`` and the ``(B, L)`` ids they should predict."""
    check_tensor("logits", logits, ndim=3, expected="(B, L, V)")
    check_float("logits", logits, "(B, L, V)")
    check_tensor("targets", targets, ndim=2, expected="(B, L)")
    if targets.dtype != torch.long:
        raise TypeError(
            f"targets must hold token ids (torch.long), got dtype {targets.dtype}; "
            "convert with `targets.long()`"
        )
    if logits.shape[:2] != targets.shape:
        raise ValueError(
            f"targets must have shape (B, L) = {tuple(logits.shape[:2])} as "
            f"logits, got shape {tuple(targets.shape)}"
        )
    check_device("targets", targets, logits.device, "logits")
    check_id_range(("targets", targets, logits.shape[-1]))


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
    _check_pair(logits, targets)
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
    _check_pair(logits, targets)
    # (B, L)
    real = targets != PAD_ID
    return (logits.argmax(dim=-1) == targets)[real].float().mean().item()


@torch.no_grad()
def _eval_logits(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Run ``model`` on ``batch`` in eval mode (no dropout), then restore its mode."""
    was_training = model.training
    model.eval()
    try:
        # (B, L, V)
        return batch.logits(model)
    finally:
        model.train(was_training)


def evaluate(model: nn.Module, batch: Batch) -> tuple[float, float]:
    """Return ``(loss, token accuracy)`` of ``model`` on ``batch``, in eval mode."""
    # (B, L, V)
    logits = _eval_logits(model, batch)
    return sequence_loss(logits, batch.targets).item(), token_accuracy(
        logits, batch.targets
    )


def position_accuracy(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Return the token accuracy at each position, NaN where all targets are PAD.

    Shape:
        output: ``(L,)``
    """
    # (B, L)
    right = _eval_logits(model, batch).argmax(dim=-1) == batch.targets
    # (B, L)
    real = batch.targets != PAD_ID
    # (L,)
    return (right & real).sum(0) / real.sum(0)
