"""Batches: toy-task examples turned into the padded tensors a model trains on.

The encoder-decoder reads ``source + EOS`` and, after BOS, predicts
``target + EOS`` (:func:`seq2seq_batch`). A decoder-only model reads one
sequence, in one of two layouts (:func:`lm_batch`). Every batch knows how to
run a model on itself, so one training loop serves both kinds of model.
Target positions that hold PAD carry no loss. Batches are built on the CPU;
``batch.to(device)`` moves one to a model's device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import torch
import torch.nn as nn

from ..checks.data import check_examples, check_lm_batch_args
from ..parts.masks import padding_mask, prefix_lm_mask
from .tasks import Example
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, pad_ids


@dataclass(frozen=True)
class Seq2SeqBatch:
    """A batch for the encoder-decoder
    :class:`~transformer.models.encoder_decoder.Transformer`.

    Attributes:
        src: ``source + EOS``, padded, ``(B, S)``.
        src_mask: Padding mask of ``src``, ``True`` = real token, ``(B, 1, 1, S)``.
        tgt_in: ``BOS + target``, the decoder's input, padded, ``(B, L)``.
        targets: ``target + EOS``, what each position must predict; PAD = no
            loss, ``(B, L)``.
    """

    src: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    targets: torch.Tensor

    def logits(self, model: nn.Module) -> torch.Tensor:
        """Run ``model`` on the batch (teacher forcing); return ``(B, L, V)`` logits."""
        # (B, L, V)
        return model(self.src, self.tgt_in, src_mask=self.src_mask)

    def to(self, device: torch.device | str) -> Seq2SeqBatch:
        """Return the batch with every tensor on ``device``."""
        return moved(self, device)


def seq2seq_batch(examples: Sequence[Example]) -> Seq2SeqBatch:
    """Build an encoder-decoder batch from examples of any lengths.

    Raises:
        TypeError: If ``examples`` does not hold
            :class:`~transformer.data.tasks.Example` objects.
        ValueError: If ``examples`` is empty.
    """
    check_examples(examples)
    # (B, S)
    src = pad_ids([e.source + (EOS_ID,) for e in examples])
    lengths = [len(e.source) + 1 for e in examples]
    # (B, L)
    tgt_in = pad_ids([(BOS_ID,) + e.target for e in examples])
    # (B, L)
    targets = pad_ids([e.target + (EOS_ID,) for e in examples])
    return Seq2SeqBatch(src, padding_mask(lengths, src.shape[1]), tgt_in, targets)


@dataclass(frozen=True)
class LMBatch:
    """A batch for the :class:`~transformer.models.decoder_only.DecoderOnlyTransformer`.

    Attributes:
        x: The input ids, padded, ``(B, L)``.
        mask: ``None`` for the model's causal mask, or a prefix-LM mask
            ``(B, 1, L, L)``.
        targets: The id each position must predict, ``(B, L)``; PAD = no loss
            under :func:`~transformer.training.metrics.sequence_loss`.
    """

    x: torch.Tensor
    mask: torch.Tensor | None
    targets: torch.Tensor

    def logits(self, model: nn.Module) -> torch.Tensor:
        """Run ``model`` on the batch and return ``(B, L, V)`` logits."""
        # (B, L, V)
        return model(self.x, self.mask)

    def to(self, device: torch.device | str) -> LMBatch:
        """Return the batch with every tensor on ``device``."""
        return moved(self, device)


def moved(batch: Seq2SeqBatch | LMBatch, device: torch.device | str) -> Batch:
    """Return a copy of ``batch`` whose tensors are on ``device``."""
    tensors = {f.name: getattr(batch, f.name) for f in fields(batch)}
    return replace(
        batch, **{k: t.to(device) for k, t in tensors.items() if t is not None}
    )


def lm_batch(
    examples: Sequence[Example], *, layout: str = "prompt", prefix: bool = False
) -> LMBatch:
    """Build a decoder-only batch in one of two layouts.

    - ``"prompt"``: the model reads ``BOS source EOS target`` and is trained
      to predict ``target EOS``, so the whole source comes before the answer.
    - ``"aligned"``: the model reads ``source`` and position ``t`` must
      predict ``target[t]`` at once, before it has read the rest of the
      source. Source and target must have the same length.

    Args:
        examples: The examples.
        layout: ``"prompt"`` or ``"aligned"``.
        prefix: Use a :func:`~transformer.parts.masks.prefix_lm_mask` that shows every
            position the whole prompt (``BOS source EOS``; in the aligned
            layout, the whole source) instead of the model's causal mask.

    Returns:
        The batch.

    Raises:
        TypeError: If ``examples`` does not hold
            :class:`~transformer.data.tasks.Example` objects.
        ValueError: If ``examples`` is empty, ``layout`` is unknown, or an
            aligned example's source and target differ in length.
    """
    check_lm_batch_args(examples, layout)
    if layout == "aligned":
        x, targets = (
            pad_ids([e.source for e in examples]),
            pad_ids([e.target for e in examples]),
        )
        prompt_lengths = [len(e.source) for e in examples]
    else:
        # Predict nothing while reading BOS and the source: those targets are PAD.
        # (B, L)
        x = pad_ids([(BOS_ID, *e.source, EOS_ID, *e.target) for e in examples])
        # (B, L)
        targets = pad_ids(
            [(PAD_ID,) * (len(e.source) + 1) + e.target + (EOS_ID,) for e in examples]
        )
        prompt_lengths = [len(e.source) + 2 for e in examples]
    mask = prefix_lm_mask(prompt_lengths, x.shape[1]) if prefix else None
    return LMBatch(x, mask, targets)


Batch = Seq2SeqBatch | LMBatch
"""Either kind of batch; both have ``targets`` and a ``logits(model)`` method."""
