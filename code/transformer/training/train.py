"""A small training loop for the book's toy tasks.

Every step is :func:`train_step`: one AdamW step with gradient clipping, the
step that the character model's loop (:mod:`transformer.training.charlm`)
takes too. The paper's warm-up learning-rate schedule and label smoothing
are options. It works for both complete models,
because the batches of :mod:`transformer.data.batches` know how to run a model on
themselves; it returns a :class:`History` of loss and token accuracy
(:mod:`transformer.training.metrics`) for the training batches and a fixed held-out
batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import torch
import torch.nn as nn

from ..checks.training import (
    check_noam_lr_args,
    check_train_args,
    check_train_step_args,
)
from ..data.batches import Batch, lm_batch, seq2seq_batch
from ..data.placement import device_of
from ..data.tasks import Example, TaskData
from ..models.decoder_only import DecoderOnlyTransformer
from .metrics import evaluate, loss_and_accuracy, sequence_loss


def noam_lr(step: int, d_model: int, warmup: int) -> float:
    """Return the paper's learning rate at ``step`` (counted from 1).

    It rises linearly for ``warmup`` steps, then decays as ``1/sqrt(step)``:
    ``d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)``.

    Raises:
        TypeError: If an argument is not an int.
        ValueError: If an argument is not positive.
    """
    check_noam_lr_args(step, d_model, warmup)
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def default_batch_fn(model: nn.Module) -> Callable[[Sequence[Example]], Batch]:
    """Return the batch builder a model reads: prompt layout for decoder-only models."""
    return lm_batch if isinstance(model, DecoderOnlyTransformer) else seq2seq_batch


@dataclass
class History:
    """What :func:`train` measured: one entry per step, and one per evaluation.

    The losses are cross-entropies without label smoothing, so that training
    and held-out curves are comparable.

    Attributes:
        step: The step of each training entry, from 1.
        lr: The learning rate of each step.
        train_loss: The loss of each step's batch, before the step learns from it.
        train_acc: The next-token accuracy of each step's batch.
        eval_step: The step of each held-out measurement.
        eval_loss: The loss on the held-out batch at each measurement.
        eval_acc: The accuracy on the held-out batch at each measurement.
    """

    step: list[int] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)
    eval_acc: list[float] = field(default_factory=list)

    def add(self, step: int, lr: float, loss: float, acc: float) -> None:
        """Record one training step: its learning rate, loss and token accuracy."""
        self.step.append(step)
        self.lr.append(lr)
        self.train_loss.append(loss)
        self.train_acc.append(acc)

    def add_eval(self, step: int, loss: float, acc: float) -> None:
        """Record one measurement on held-out data, after ``step``."""
        self.eval_step.append(step)
        self.eval_loss.append(loss)
        self.eval_acc.append(acc)


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    *,
    lr: float,
    clip: float = 1.0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = sequence_loss,
) -> torch.Tensor:
    """Take one optimiser step on ``batch`` at learning rate ``lr``.

    The model runs in training mode (dropout on), on the batch moved to its
    device; gradients whose norm is larger than ``clip`` are scaled down to
    it before the step.

    Args:
        model: The model to train.
        optimizer: The optimiser of ``model``'s parameters.
        batch: A batch that runs a model on itself (``batch.logits(model)``)
            and holds its ``targets``.
        lr: The learning rate of this step, set on every parameter group.
        clip: Largest gradient norm.
        loss_fn: Maps logits and targets to the scalar loss to minimise.

    Returns:
        The logits of the batch, detached, for measuring.

    Shape:
        output: ``(B, L, V)``

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If ``lr`` or ``clip`` is not a positive number.
    """
    check_train_step_args(model, optimizer, batch, lr, clip)
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    batch = batch.to(device_of(model))
    # (B, L, V)
    logits = batch.logits(model)
    loss = loss_fn(logits, batch.targets)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return logits.detach()


def train(
    model: nn.Module,
    data: TaskData,
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 1e-3,
    warmup: int | None = None,
    label_smoothing: float = 0.0,
    clip: float = 1.0,
    weight_decay: float = 0.01,
    batch_fn: Callable[[Sequence[Example]], Batch] | None = None,
    eval_every: int = 10,
    eval_size: int = 256,
    seed: int = 0,
    progress: bool = False,
) -> History:
    """Train ``model`` on ``data.train`` and measure it on the start of ``data.test``.

    Args:
        model: A :class:`~transformer.models.encoder_decoder.Transformer` or
            :class:`~transformer.models.decoder_only.DecoderOnlyTransformer`.
        data: The task, from :func:`~transformer.data.tasks.make_task`.
        steps: Number of optimiser steps.
        batch_size: Examples per step, drawn at random with replacement.
        lr: The learning rate; with ``warmup``, the factor that multiplies
            :func:`noam_lr` (``1.0`` is the paper's schedule).
        warmup: Warm-up steps of the paper's schedule; ``None`` keeps ``lr`` constant.
        label_smoothing: Label smoothing of the training loss.
        clip: Largest gradient norm; larger gradients are scaled down.
        weight_decay: AdamW's decoupled weight decay.
        batch_fn: Turns a list of examples into a batch; defaults to
            :func:`default_batch_fn` of the model.
        eval_every: Measure the held-out batch every this many steps.
        eval_size: Number of held-out examples in the held-out batch.
        seed: Seed of the generator that draws the training batches.
        progress: Show a tqdm progress bar (for interactive use).

    Returns:
        The history of the run.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If a number is out of range.
    """
    check_train_args(**locals())
    batch_fn = batch_fn or default_batch_fn(model)
    device = device_of(model)
    held_out = batch_fn(data.test[:eval_size]).to(device)
    # PyTorch's default betas, not the paper's (0.9, 0.98): these tiny models
    # converge within a few hundred steps, and with beta2 = 0.98 they were less stable.
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    smoothed = partial(sequence_loss, label_smoothing=label_smoothing)
    g = torch.Generator().manual_seed(seed)
    history = History()
    loop = range(1, steps + 1)
    if progress:
        from tqdm.auto import tqdm  # only interactive runs need it

        loop = tqdm(loop, desc="training")
    for step in loop:
        rate = lr * noam_lr(step, model.config.d_model, warmup) if warmup else lr
        picks = torch.randint(len(data.train), (batch_size,), generator=g).tolist()
        batch = batch_fn([data.train[i] for i in picks]).to(device)
        # (B, L, V)
        logits = train_step(
            model, optimizer, batch, lr=rate, clip=clip, loss_fn=smoothed
        )
        history.add(step, rate, *loss_and_accuracy(logits, batch.targets))
        if step % eval_every == 0 or step == steps:
            history.add_eval(step, *evaluate(model, held_out))
            if progress:
                loss, acc = history.train_loss[-1], history.eval_acc[-1]
                loop.set_postfix(loss=f"{loss:.3f}", held_out=f"{acc:.3f}")
    model.eval()
    return history
