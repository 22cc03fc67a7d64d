"""A small training loop for the book's toy tasks.

The loop is AdamW with gradient clipping; the paper's warm-up learning-rate
schedule and label smoothing are options. It works for both complete models,
because the batches of :mod:`transformer.data.batches` know how to run a model on
themselves; it returns a :class:`History` of loss and token accuracy
(:mod:`transformer.training.metrics`) for the training batches and a fixed held-out
batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn as nn

from ..checks.tensors import check_positive_float, check_positive_int, check_probability
from ..data.batches import Batch, lm_batch, seq2seq_batch
from ..data.tasks import Example, TaskData
from ..models.decoder_only import DecoderOnlyTransformer
from .metrics import evaluate, sequence_loss, token_accuracy


def noam_lr(step: int, d_model: int, warmup: int) -> float:
    """Return the paper's learning rate at ``step`` (counted from 1).

    It rises linearly for ``warmup`` steps, then decays as ``1/sqrt(step)``:
    ``d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)``.

    Raises:
        TypeError: If an argument is not an int.
        ValueError: If an argument is not positive.
    """
    for name, value in [("step", step), ("d_model", d_model), ("warmup", warmup)]:
        check_positive_int(name, value)
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def default_batch_fn(model: nn.Module) -> Callable[[Sequence[Example]], Batch]:
    """Return the batch builder a model reads: prompt layout for decoder-only models."""
    return lm_batch if isinstance(model, DecoderOnlyTransformer) else seq2seq_batch


@dataclass
class History:
    """What :func:`train` measured: one entry per step, and one per evaluation.

    The losses are cross-entropies without label smoothing, so that training
    and held-out curves are comparable.
    """

    step: list[int] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)
    eval_acc: list[float] = field(default_factory=list)


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
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(data, TaskData):
        raise TypeError(
            f"data must be a TaskData from make_task, got {type(data).__name__}"
        )
    for name, value in [
        ("steps", steps),
        ("batch_size", batch_size),
        ("eval_every", eval_every),
        ("eval_size", eval_size),
    ]:
        check_positive_int(name, value)
    check_positive_float("lr", lr)
    check_positive_float("clip", clip)
    check_probability("label_smoothing", label_smoothing)
    check_probability("weight_decay", weight_decay)
    if warmup is not None:
        check_positive_int("warmup", warmup)
    batch_fn = batch_fn or default_batch_fn(model)
    held_out = batch_fn(data.test[:eval_size])
    # PyTorch's default betas, not the paper's (0.9, 0.98): these tiny models
    # converge within a few hundred steps, and with beta2 = 0.98 they were less stable.
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    g = torch.Generator().manual_seed(seed)
    history = History()
    loop = range(1, steps + 1)
    if progress:
        from tqdm.auto import tqdm  # only interactive runs need it

        loop = tqdm(loop, desc="training")
    model.train()
    for step in loop:
        rate = lr * noam_lr(step, model.config.d_model, warmup) if warmup else lr
        for group in optimizer.param_groups:
            group["lr"] = rate
        picks = torch.randint(len(data.train), (batch_size,), generator=g).tolist()
        batch = batch_fn([data.train[i] for i in picks])
        # (B, L, V)
        logits = batch.logits(model)
        loss = sequence_loss(logits, batch.targets, label_smoothing)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()

        history.step.append(step)
        history.lr.append(rate)
        history.train_loss.append(sequence_loss(logits.detach(), batch.targets).item())
        history.train_acc.append(token_accuracy(logits.detach(), batch.targets))
        if step % eval_every == 0 or step == steps:
            eval_loss, eval_acc = evaluate(model, held_out)
            history.eval_step.append(step)
            history.eval_loss.append(eval_loss)
            history.eval_acc.append(eval_acc)
            if progress:
                loop.set_postfix(
                    loss=f"{history.train_loss[-1]:.3f}", held_out=f"{eval_acc:.3f}"
                )
    model.eval()
    return history
