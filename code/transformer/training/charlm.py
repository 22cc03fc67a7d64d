"""A character-level language model's data and training loop, for text of any source.

The book trains one on its own chapters (the language-model chapter):
:class:`CharCorpus` turns a string into a vocabulary of characters and a
training and a validation stream of ids; :func:`train_lm` trains a
:class:`~transformer.models.decoder_only.DecoderOnlyTransformer` to predict the next
character of random windows; :func:`bits_per_char` measures it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ..checks.training import (
    check_bits_per_char_args,
    check_corpus_text,
    check_in_vocabulary,
    check_train_lm_args,
    check_window_args,
)
from ..data.batches import LMBatch
from ..data.placement import device_of
from ..models.decoder_only import DecoderOnlyTransformer
from .modes import evaluating
from .train import History, train_step


def book_chapters() -> dict[str, str]:
    """Return the MyST source of every page of this book, by file name, in name order.

    In a checkout of the repository they are read from ``book/``; an
    installed wheel carries a copy of them as package data.

    Returns:
        The text of each ``*.md`` page, keyed by its name without ``.md``.

    Raises:
        FileNotFoundError: If neither place holds the chapters.
    """
    package = Path(__file__).resolve().parent.parent  # transformer/
    for folder in (package.parent.parent / "book", package / "chapters"):
        pages = sorted(folder.glob("*.md"))
        if pages:
            return {p.stem: p.read_text(encoding="utf-8") for p in pages}
    raise FileNotFoundError(f"no chapters found beside the package in {package}")


@dataclass(frozen=True)
class CharCorpus:
    """A text as ids: one id per distinct character, and a validation split at the end.

    Build it with :meth:`from_text`.

    Attributes:
        chars: The vocabulary: every distinct character, sorted; id ``i`` is
            ``chars[i]``.
        train: Ids of the first part of the text, ``(n_train,)``.
        val: Ids of the held-out last part, ``(n_val,)``.
    """

    chars: str
    train: torch.Tensor
    val: torch.Tensor

    @classmethod
    def from_text(
        cls, text: str | Sequence[str], val_fraction: float = 0.1
    ) -> CharCorpus:
        """Hold out the last ``val_fraction`` of each text for validation.

        Each held-out part is one contiguous stretch, so that it is text the
        model has never seen, not characters interleaved with its training
        text. With several texts (e.g. chapters), every one of them gives its
        tail, so that the validation text is like the training text.

        Args:
            text: The text, or several texts.
            val_fraction: Share of each text held out, in ``(0, 1)``.

        Returns:
            The corpus.

        Raises:
            TypeError: If ``text`` is not a string or a sequence of strings.
            ValueError: If ``val_fraction`` is outside ``(0, 1)`` or a part
                would be shorter than two characters.
        """
        check_corpus_text(text, val_fraction)
        texts = [text] if isinstance(text, str) else text
        chars = "".join(sorted(set("".join(texts))))
        index = {c: i for i, c in enumerate(chars)}
        train, val = [], []
        for t in texts:
            n_val = int(len(t) * val_fraction)
            # (n,)
            ids = torch.tensor([index[c] for c in t], dtype=torch.long)
            train.append(ids[:-n_val])
            val.append(ids[-n_val:])
        return cls(chars, torch.cat(train), torch.cat(val))

    @property
    def vocab_size(self) -> int:
        """The number of distinct characters, ``V``."""
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Return the ids of ``text``, shape ``(len(text),)``.

        Raises:
            ValueError: If ``text`` holds a character outside the vocabulary.
        """
        check_in_vocabulary(text, self.chars)
        return torch.tensor([self.chars.index(c) for c in text], dtype=torch.long)

    def decode(self, ids: torch.Tensor) -> str:
        """Return the text of a 1-D tensor (or list) of ids."""
        return "".join(self.chars[i] for i in torch.as_tensor(ids).tolist())

    def batch(
        self,
        split: str,
        batch_size: int,
        block_size: int,
        generator: torch.Generator,
        *,
        device: torch.device | str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw random windows of ``block_size`` characters and the same shifted by one.

        Args:
            split: ``"train"`` or ``"val"``.
            batch_size: Number of windows ``B``.
            block_size: Characters per window ``L``.
            generator: Chooses the windows.
            device: Where the windows go: a model's device; ``None``, the CPU.

        Returns:
            Inputs and targets, each ``(B, L)``: target ``t`` is the character
            after input ``t``.

        Raises:
            ValueError: If ``split`` is unknown or the text is not longer than
                ``block_size``.
        """
        check_window_args(self, split, block_size)
        data = self.train if split == "train" else self.val
        starts = torch.randint(
            len(data) - block_size, (batch_size,), generator=generator
        )
        # (B, L)
        x = torch.stack([data[s : s + block_size] for s in starts.tolist()])
        # (B, L)
        y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts.tolist()])
        return x.to(device), y.to(device)


@torch.no_grad()
def bits_per_char(
    model: DecoderOnlyTransformer, ids: torch.Tensor, block_size: int
) -> float:
    """Return the model's average cross-entropy on ``ids`` in bits per character.

    The text is cut into consecutive windows of ``block_size + 1`` characters
    (the tail that does not fill a window is left out); in each window the
    model predicts characters 1 to ``block_size`` from the ones before them.

    Args:
        model: A trained character model.
        ids: A stream of character ids, ``(n,)``.
        block_size: Context length ``L`` of each window.

    Returns:
        The cross-entropy divided by ln 2; a uniform guess scores ``log2(V)``.

    Raises:
        ValueError: If ``ids`` is shorter than one window.
    """
    check_bits_per_char_args(ids, block_size)
    n = (len(ids) - 1) // block_size
    # (n, L + 1), on the model's device
    windows = ids[: n * block_size + 1].unfold(0, block_size + 1, block_size)
    windows = windows.to(device_of(model))
    with evaluating(model):
        loss = next_char_loss(model(windows[:, :-1]), windows[:, 1:])
    return loss.item() / math.log(2)


@torch.no_grad()
def position_bits(
    model: DecoderOnlyTransformer, ids: torch.Tensor, block_size: int, windows: int
) -> torch.Tensor:
    """Return the model's bits on each character of the first ``windows`` windows.

    Windows as :func:`bits_per_char`'s; position ``t`` has seen ``t + 1`` characters.

    Returns:
        Bits per prediction, ``(n, block_size)``, ``n`` at most ``windows``.

    Raises:
        ValueError: If ``ids`` is shorter than one window.
    """
    check_bits_per_char_args(ids, block_size)
    n = min(windows, (len(ids) - 1) // block_size)
    # (n, L + 1), on the model's device
    cut = ids[: n * block_size + 1].unfold(0, block_size + 1, block_size)
    cut = cut.to(device_of(model))
    with evaluating(model):
        logits = model(cut[:, :-1])
    nats = F.cross_entropy(logits.transpose(1, 2), cut[:, 1:], reduction="none")
    return nats / math.log(2)


def next_char_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Return the mean cross-entropy over every position: a text has no padding.

    Shape:
        - logits: ``(B, L, V)``
        - targets: ``(B, L)``
        - output: ``()``
    """
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def train_lm(
    model: DecoderOnlyTransformer,
    corpus: CharCorpus,
    *,
    steps: int,
    batch_size: int = 32,
    block_size: int = 64,
    lr: float = 3e-3,
    warmup: int = 20,
    eval_every: int = 25,
    eval_batches: int = 4,
    seed: int = 0,
) -> History:
    """Train ``model`` to predict the next character of random training windows.

    AdamW with a linear warm-up for ``warmup`` steps, then a cosine decay to a
    tenth of ``lr``, and gradient clipping at norm 1. Every ``eval_every``
    steps the loss is measured on the same ``eval_batches`` validation batches.

    Args:
        model: The model; ``model.config.vocab_size`` must be ``corpus.vocab_size``.
        corpus: The text.
        steps: Optimiser steps.
        batch_size: Windows per step.
        block_size: Characters per window.
        lr: Peak learning rate.
        warmup: Steps of linear warm-up.
        eval_every: Steps between validation measurements.
        eval_batches: Validation batches per measurement.
        seed: Seed of the generator that draws the windows.

    Returns:
        The :class:`~transformer.training.train.History`; losses are cross-entropies in
        nats per character.

    Raises:
        TypeError: If ``model`` or ``corpus`` has the wrong type.
        ValueError: If a number is out of range or the vocabularies differ.
    """
    check_train_lm_args(**locals())
    g, device = torch.Generator().manual_seed(seed), device_of(model)
    held_out = [
        corpus.batch("val", batch_size, block_size, g, device=device)
        for _ in range(eval_batches)
    ]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    history = History()
    for step in range(1, steps + 1):
        progress = max(0.0, (step - warmup) / max(1, steps - warmup))
        rate = lr * min(step / warmup, 0.1 + 0.45 * (1 + math.cos(math.pi * progress)))
        x, y = corpus.batch("train", batch_size, block_size, g, device=device)
        # (B, L, V)
        logits = train_step(
            model, optimizer, LMBatch(x, None, y), lr=rate, loss_fn=next_char_loss
        )
        history.add(step, rate, *_loss_and_accuracy(logits, y))
        if step % eval_every == 0 or step == steps:
            with evaluating(model), torch.no_grad():
                results = [_loss_and_accuracy(model(vx), vy) for vx, vy in held_out]
            losses, accs = zip(*results)
            history.add_eval(step, sum(losses) / len(losses), sum(accs) / len(accs))
    model.eval()
    return history


def _loss_and_accuracy(
    logits: torch.Tensor, targets: torch.Tensor
) -> tuple[float, float]:
    """Cross-entropy and next-character accuracy of ``(B, L, V)`` logits."""
    loss = next_char_loss(logits, targets).item()
    return loss, (logits.argmax(-1) == targets).float().mean().item()
