"""Checks of the training routines' arguments: the loops, the loss, the text.

Like every check in this folder, each names the argument, what was expected
and what was received. The objects of other folders (a task, a corpus, a
batch) are recognised by the attributes the routine reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn

from .ids import check_id_range
from .model_kind import check_decoder_only
from .tensors import (
    check_device,
    check_float,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_tensor,
)


def check_noam_lr_args(step: object, d_model: object, warmup: object) -> None:
    """Check that the three arguments of ``noam_lr`` are positive ints."""
    for name, value in [("step", step), ("d_model", d_model), ("warmup", warmup)]:
        check_positive_int(name, value)


def check_train_args(
    model: object,
    data: object,
    *,
    steps: object,
    batch_size: object,
    lr: object,
    warmup: object,
    label_smoothing: object,
    clip: object,
    weight_decay: object,
    eval_every: object,
    eval_size: object,
    **_: object,
) -> None:
    """Check the arguments of ``train``, given by name; the others are not checked."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not all(hasattr(data, a) for a in ("tokenizer", "train", "test")):
        raise TypeError(
            f"data must be a TaskData from make_task, got {type(data).__name__}"
        )
    sizes = {"steps": steps, "batch_size": batch_size, "eval_every": eval_every}
    for name, value in (sizes | {"eval_size": eval_size}).items():
        check_positive_int(name, value)
    check_positive_float("lr", lr)
    check_positive_float("clip", clip)
    check_probability("label_smoothing", label_smoothing)
    check_probability("weight_decay", weight_decay)
    if warmup is not None:
        check_positive_int("warmup", warmup)


def check_train_step_args(
    model: object, optimizer: object, batch: object, lr: object, clip: object
) -> None:
    """Check the arguments of ``train_step``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    if not (callable(getattr(batch, "logits", None)) and hasattr(batch, "targets")):
        raise TypeError(
            "batch must have a logits(model) method and targets, like a Seq2SeqBatch "
            f"or an LMBatch, got {type(batch).__name__}"
        )
    check_positive_float("lr", lr)
    check_positive_float("clip", clip)


def check_train_lm_args(
    model: object,
    corpus: object,
    *,
    steps: object,
    batch_size: object,
    block_size: object,
    lr: object,
    warmup: object,
    eval_every: object,
    eval_batches: object,
    **_: object,
) -> None:
    """Check the arguments of ``train_lm``, given by name; the others go unchecked."""
    check_decoder_only(model)
    if not all(hasattr(corpus, a) for a in ("chars", "train", "val", "batch")):
        raise TypeError(f"corpus must be a CharCorpus, got {type(corpus).__name__}")
    if model.config.vocab_size != len(corpus.chars):
        raise ValueError(
            f"model.config.vocab_size={model.config.vocab_size} must equal "
            f"corpus.vocab_size={len(corpus.chars)}"
        )
    sizes = {"steps": steps, "batch_size": batch_size, "block_size": block_size}
    sizes |= {"warmup": warmup, "eval_every": eval_every, "eval_batches": eval_batches}
    for name, value in sizes.items():
        check_positive_int(name, value)
    check_positive_float("lr", lr)


def check_logits_and_targets(logits: object, targets: object) -> None:
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


def check_corpus_text(text: object, val_fraction: object) -> None:
    """Check the text of ``CharCorpus.from_text`` and the share held out of each."""
    texts = [text] if isinstance(text, str) else text
    if (
        not isinstance(texts, Sequence)
        or not texts
        or not all(isinstance(t, str) for t in texts)
    ):
        raise TypeError("text must be a str or a non-empty sequence of str")
    if check_probability("val_fraction", val_fraction) == 0.0:
        raise ValueError("val_fraction must be in (0, 1), got 0")
    for t in texts:
        n_val = int(len(t) * val_fraction)
        if n_val < 2 or len(t) - n_val < 2:
            raise ValueError(
                f"a text of {len(t)} characters is too short for "
                f"val_fraction={val_fraction}"
            )


def check_is_corpus(corpus: object) -> None:
    """Check that ``corpus`` has a vocabulary and two id streams of two or more."""
    parts = ("vocab_size", "train", "val")
    if not all(hasattr(corpus, name) for name in parts):
        raise TypeError(
            "corpus must be a CharCorpus (vocab_size, train and val), "
            f"got {type(corpus).__name__}"
        )
    for split in ("train", "val"):
        ids = getattr(corpus, split)
        if not isinstance(ids, torch.Tensor) or ids.ndim != 1 or len(ids) < 2:
            raise ValueError(
                f"corpus.{split} must be a 1-D tensor of two or more ids, got "
                f"{tuple(ids.shape) if isinstance(ids, torch.Tensor) else ids!r}"
            )


def check_in_vocabulary(text: str, chars: str) -> None:
    """Raise ``ValueError`` naming the characters of ``text`` missing from ``chars``."""
    unknown = sorted(set(text) - set(chars))
    if unknown:
        raise ValueError(f"text holds characters outside the vocabulary: {unknown}")


def check_window_args(corpus: object, split: object, block_size: int) -> None:
    """Check that ``corpus`` has a ``split`` text longer than ``block_size``."""
    if split not in ("train", "val"):
        raise ValueError(f"split must be 'train' or 'val', got {split!r}")
    n = len(getattr(corpus, split))
    if n <= block_size:
        raise ValueError(
            f"block_size={block_size} needs a {split} text longer than it, got {n}"
        )


def check_bits_per_char_args(ids: torch.Tensor, block_size: object) -> None:
    """Check that ``ids`` holds at least one window of ``block_size + 1`` ids."""
    check_positive_int("block_size", block_size)
    if (len(ids) - 1) // block_size < 1:
        raise ValueError(
            f"ids must hold more than block_size={block_size} ids, got {len(ids)}"
        )


def check_gradient_norm_args(layers: object, x: object) -> None:
    """Check the layers and the input of ``layer_gradient_norms``."""
    check_tensor("x", x)
    if len(layers) == 0:
        raise ValueError("layers must hold at least one nn.Module, got none")
    for n, layer in enumerate(layers):
        if not isinstance(layer, nn.Module):
            raise TypeError(
                f"layers[{n}] must be an nn.Module, got {type(layer).__name__}"
            )


def check_scalar_loss(loss: object) -> None:
    """Raise ``TypeError`` unless ``loss_fn`` returned a scalar tensor."""
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        got = (
            tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        )
        raise TypeError(f"loss_fn must return a scalar tensor, got {got}")
