"""Greedy decoding: let a trained model write its answer one token at a time.

At every step the model sees everything generated so far and the most likely
next token is appended. A row stops at EOS (and is padded with PAD from then
on); the whole batch stops when every row has stopped or after ``max_len``
new tokens. Rows of different lengths share one batch: sources are
right-padded and masked, prompts are right-padded and each row reads its
next token at its own position.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._checks import check_positive_int, check_token_ids
from .decoder_only import DecoderOnlyTransformer
from .masks import padding_mask, prefix_lm_mask
from .model import Transformer
from .tasks import Example
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, pad_ids

Lengths = Sequence[int] | torch.Tensor | None


def _lengths(name: str, lengths: Lengths, ids: torch.Tensor) -> torch.Tensor:
    """Return ``lengths`` as a ``(B,)`` tensor, full rows when ``None``."""
    B, L = ids.shape
    if lengths is None:
        return torch.full((B,), L)
    lengths = torch.as_tensor(lengths)
    if lengths.shape != (B,) or int(lengths.min()) < 1 or int(lengths.max()) > L:
        raise ValueError(
            f"{name} must have shape (B,) = ({B},) with values in [1, {L}], "
            f"got {lengths.tolist()}"
        )
    return lengths


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: torch.Tensor, src_lengths: Lengths = None, *, max_len: int
) -> torch.Tensor:
    """Encode ``src`` once, then decode from BOS until EOS or ``max_len`` new tokens.

    Args:
        model: A trained encoder-decoder.
        src: Source ids, right-padded.
        src_lengths: True length of each source; ``None`` when none is padded.
        max_len: Most tokens to generate per row.

    Returns:
        The generated ids, without BOS; each row ends with its first EOS and
        is PAD after it.

    Shape:
        - src: ``(B, S)``
        - src_lengths: ``(B,)``
        - output: ``(B, T)`` with ``T <= max_len``

    Raises:
        TypeError: If ``model`` is not a ``Transformer`` or ``src`` does not hold ids.
        ValueError: If ``src`` or ``src_lengths`` has the wrong shape, or
            ``max_len`` is not positive.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    check_token_ids("src", src, model.config.src_vocab_size)
    check_positive_int("max_len", max_len)
    src_mask = padding_mask(_lengths("src_lengths", src_lengths, src), src.shape[1])
    was_training = model.training
    model.eval()
    memory = model.encode(src, src_mask)  # (B, S, d_model)
    out = torch.full((src.shape[0], 1), BOS_ID)  # (B, 1)
    done = torch.zeros(src.shape[0], dtype=torch.bool)  # (B,)
    for _ in range(max_len):
        logits = model.decode(out, memory, src_mask)  # (B, t, V)
        token = logits[:, -1].argmax(dim=-1).masked_fill(done, PAD_ID)  # (B,)
        out = torch.cat([out, token[:, None]], dim=1)  # (B, t + 1)
        done |= token == EOS_ID
        if done.all():
            break
    model.train(was_training)
    return out[:, 1:]  # (B, T)


@torch.no_grad()
def greedy_generate(
    model: DecoderOnlyTransformer,
    prompt: torch.Tensor,
    prompt_lengths: Lengths = None,
    *,
    max_new_tokens: int,
    prefix: bool = False,
) -> torch.Tensor:
    """Continue each prompt with the most likely token until EOS or ``max_new_tokens``.

    Args:
        model: A trained decoder-only model.
        prompt: Prompt ids, right-padded.
        prompt_lengths: True length of each prompt; ``None`` when none is padded.
        max_new_tokens: Most tokens to generate per row.
        prefix: Let every position see the whole prompt
            (:func:`~transformer.masks.prefix_lm_mask`), as in training with
            ``lm_batch(..., prefix=True)``; otherwise the mask is causal.

    Returns:
        The generated ids; a row is PAD after its first EOS.

    Shape:
        - prompt: ``(B, P)``
        - prompt_lengths: ``(B,)``
        - output: ``(B, T)`` with ``T <= max_new_tokens``

    Raises:
        TypeError: If ``model`` is not a ``DecoderOnlyTransformer`` or
            ``prompt`` does not hold ids.
        ValueError: If ``prompt`` or ``prompt_lengths`` has the wrong shape,
            ``max_new_tokens`` is not positive, or the prompt plus the new
            tokens would not fit in ``max_len``.
    """
    if not isinstance(model, DecoderOnlyTransformer):
        raise TypeError(
            f"model must be a DecoderOnlyTransformer, got {type(model).__name__}"
        )
    check_token_ids("prompt", prompt, model.config.vocab_size)
    check_positive_int("max_new_tokens", max_new_tokens)
    lengths = _lengths("prompt_lengths", prompt_lengths, prompt)
    (B, P), rows = prompt.shape, torch.arange(prompt.shape[0])
    if P + max_new_tokens - 1 > model.config.max_len:
        raise ValueError(
            f"prompt length {P} + max_new_tokens {max_new_tokens} - 1 must be "
            f"<= max_len = {model.config.max_len}"
        )
    seq = torch.full((B, P + max_new_tokens), PAD_ID)  # (B, P + T)
    seq[:, :P] = prompt.masked_fill(~padding_mask(lengths, P)[:, 0, 0], PAD_ID)
    done = torch.zeros(B, dtype=torch.bool)  # (B,)
    was_training = model.training
    model.eval()
    for t in range(max_new_tokens):
        L = int(lengths.max()) + t
        # Row b's tokens after position lengths[b] + t - 1 are padding in its future:
        # the causal (or prefix-LM) mask hides them from the position that predicts.
        mask = prefix_lm_mask(lengths, L) if prefix else None
        logits = model(seq[:, :L], mask)  # (B, L, V)
        token = (
            logits[rows, lengths + t - 1].argmax(dim=-1).masked_fill(done, PAD_ID)
        )  # (B,)
        seq[rows, lengths + t] = token
        done |= token == EOS_ID
        if done.all():
            break
    model.train(was_training)
    return torch.stack(
        [seq[b, lengths[b] : lengths[b] + t + 1] for b in range(B)]
    )  # (B, T)


def strip_eos(ids: Sequence[int] | torch.Tensor) -> tuple[int, ...] | None:
    """Return the ids before the first EOS, or ``None`` when there is no EOS."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    return tuple(ids[: ids.index(EOS_ID)]) if EOS_ID in ids else None


def predict(
    model: Transformer | DecoderOnlyTransformer,
    examples: Sequence[Example],
    *,
    prefix: bool = False,
    batch_size: int = 500,
) -> list[tuple[int, ...] | None]:
    """Greedily answer each example's source; ``None`` where no EOS was produced.

    The encoder-decoder reads ``source EOS``; a decoder-only model continues
    the prompt ``BOS source EOS`` (the prompt layout of
    :func:`~transformer.batches.lm_batch`). Each answer may be up to twice as
    long as its target.

    Args:
        model: A trained encoder-decoder or decoder-only model.
        examples: The examples to answer; their targets only bound the length.
        prefix: For a decoder-only model, decode with the prefix-LM mask.
        batch_size: Examples decoded together.

    Returns:
        One answer per example: its ids before the first EOS, or ``None``.

    Raises:
        TypeError: If ``model`` is neither kind of model.
    """
    if not isinstance(model, (Transformer, DecoderOnlyTransformer)):
        raise TypeError(
            f"model must be a Transformer or DecoderOnlyTransformer, "
            f"got {type(model).__name__}"
        )
    answers: list[tuple[int, ...] | None] = []
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        longest = 2 * max(len(e.target) for e in chunk) + 1
        rows = [
            (BOS_ID,) * isinstance(model, DecoderOnlyTransformer) + e.source + (EOS_ID,)
            for e in chunk
        ]
        ids = pad_ids(rows)  # (B, S)
        lengths = torch.tensor([len(r) for r in rows])  # (B,)
        if isinstance(model, Transformer):
            out = greedy_decode(model, ids, lengths, max_len=longest)
        else:
            out = greedy_generate(
                model, ids, lengths, max_new_tokens=longest, prefix=prefix
            )
        answers += [strip_eos(row) for row in out]
    return answers


def exact_match(
    model: Transformer | DecoderOnlyTransformer,
    examples: Sequence[Example],
    *,
    prefix: bool = False,
) -> float:
    """Return the fraction of examples whose greedy answer is exactly the target.

    The answer must end with EOS where the target does.
    """
    answers = predict(model, examples, prefix=prefix)
    return sum(a == e.target for a, e in zip(answers, examples)) / len(examples)
