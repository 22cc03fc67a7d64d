"""Greedy decoding: let a trained model write its answer one token at a time.

At every step the model sees everything generated so far and the most likely
next token is appended. A row stops at EOS (and is padded with PAD from then
on); the whole batch stops when every row has stopped or after ``max_len``
new tokens. Rows of different lengths share one batch: sources are
right-padded and masked, prompts are right-padded and each row reads its
next token at its own position.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch

from ..checks.ids import check_token_ids
from ..checks.tensors import check_positive_int
from ..data.tasks import Example
from ..data.tokenizer import BOS_ID, EOS_ID, PAD_ID, pad_ids
from ..models.decoder_only import DecoderOnlyTransformer
from ..models.encoder_decoder import Transformer
from ..parts.masks import padding_mask, prefix_lm_mask

Lengths = Sequence[int] | torch.Tensor | None


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: torch.Tensor, src_lengths: Lengths = None, *, max_len: int
) -> torch.Tensor:
    """Encode ``src`` once, then decode from BOS until EOS or ``max_len`` new tokens.

    The model runs in eval mode and is put back in its mode afterwards, even
    when an error interrupts. Every tensor is made on ``src``'s device, which
    must be the model's.

    Args:
        model: A trained encoder-decoder.
        src: Source ids, right-padded.
        src_lengths: True length of each source; ``None`` when none is padded.
        max_len: Most tokens to generate per row; at most the model's
            ``config.max_len``, since the decoder reads BOS and ``max_len - 1``
            generated tokens.

    Returns:
        The generated ids, without BOS; each row ends with its first EOS and
        is PAD after it.

    Shape:
        - src: ``(B, S)``
        - src_lengths: ``(B,)``
        - output: ``(B, T)`` with ``T <= max_len``

    Raises:
        TypeError: If ``model`` is not a ``Transformer`` or ``src`` does not hold
            ids.
        ValueError: If ``src`` or ``src_lengths`` has the wrong shape or values,
            ``src`` is on another device than the model, or ``max_len`` is not
            in ``[1, config.max_len]``.
    """
    # (B,)
    lengths = _check_decode(model, src, src_lengths, max_len)
    (B, S), device = src.shape, src.device
    # (B, 1, 1, S)
    src_mask = padding_mask(lengths, S)
    # (B, 1)
    out = torch.full((B, 1), BOS_ID, device=device)
    # (B,)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    with _eval_mode(model):
        # (B, S, d_model)
        memory = model.encode(src, src_mask)
        for _ in range(max_len):
            # (B, t, V)
            logits = model.decode(out, memory, src_mask)
            # (B,)
            token = logits[:, -1].argmax(dim=-1).masked_fill(done, PAD_ID)
            # (B, t + 1)
            out = torch.cat([out, token[:, None]], dim=1)
            done |= token == EOS_ID
            if done.all():
                break
    # (B, T)
    return out[:, 1:]


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

    The model runs in eval mode and is put back in its mode afterwards, even
    when an error interrupts. Every tensor is made on ``prompt``'s device,
    which must be the model's.

    Args:
        model: A trained decoder-only model.
        prompt: Prompt ids, right-padded.
        prompt_lengths: True length of each prompt; ``None`` when none is padded.
        max_new_tokens: Most tokens to generate per row.
        prefix: Let every position see the whole prompt
            (:func:`~transformer.parts.masks.prefix_lm_mask`), as in training with
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
        ValueError: If ``prompt`` or ``prompt_lengths`` has the wrong shape or
            values, ``prompt`` is on another device than the model,
            ``max_new_tokens`` is not positive, or the prompt plus the new
            tokens would not fit in ``max_len``.
    """
    # (B,)
    lengths = _check_generate(model, prompt, prompt_lengths, max_new_tokens)
    (B, P), device = prompt.shape, prompt.device
    # (B,)
    rows = torch.arange(B, device=device)
    # (B, P + T)
    seq = torch.full((B, P + max_new_tokens), PAD_ID, device=device)
    seq[:, :P] = prompt.masked_fill(~padding_mask(lengths, P)[:, 0, 0], PAD_ID)
    # (B,)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    with _eval_mode(model):
        for t in range(max_new_tokens):
            L = int(lengths.max()) + t
            # Row b's tokens after position lengths[b] + t - 1 are padding in its
            # future: the causal (or prefix-LM) mask hides them from the position
            # that predicts.
            mask = prefix_lm_mask(lengths, L) if prefix else None
            # (B, L, V)
            logits = model(seq[:, :L], mask)
            # (B,)
            token = logits[rows, lengths + t - 1].argmax(dim=-1)
            token = token.masked_fill(done, PAD_ID)
            seq[rows, lengths + t] = token
            done |= token == EOS_ID
            if done.all():
                break
    # (B, T)
    return torch.stack([seq[b, lengths[b] : lengths[b] + t + 1] for b in range(B)])


@contextmanager
def _eval_mode(model: torch.nn.Module) -> Iterator[None]:
    """Put ``model`` in eval mode inside the block; restore its mode, even on error."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def _check_decode(
    model: object, src: object, src_lengths: Lengths, max_len: object
) -> torch.Tensor:
    """Check :func:`greedy_decode`'s arguments; return the source lengths ``(B,)``."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    c, device = model.config, next(model.parameters()).device
    check_token_ids("src", src, c.src_vocab_size, c.max_len, device)
    lengths = _lengths("src_lengths", src_lengths, src)
    check_positive_int("max_len", max_len)
    if max_len > c.max_len:
        raise ValueError(
            f"max_len must be <= the model's config.max_len = {c.max_len} (the "
            f"decoder reads BOS and max_len - 1 tokens), got {max_len}"
        )
    return lengths


def _check_generate(
    model: object, prompt: object, prompt_lengths: Lengths, max_new_tokens: object
) -> torch.Tensor:
    """Check :func:`greedy_generate`'s arguments; return the prompt lengths ``(B,)``."""
    if not isinstance(model, DecoderOnlyTransformer):
        raise TypeError(
            f"model must be a DecoderOnlyTransformer, got {type(model).__name__}"
        )
    c, device = model.config, next(model.parameters()).device
    check_token_ids("prompt", prompt, c.vocab_size, c.max_len, device)
    lengths = _lengths("prompt_lengths", prompt_lengths, prompt)
    check_positive_int("max_new_tokens", max_new_tokens)
    P = prompt.shape[1]
    if P + max_new_tokens - 1 > c.max_len:
        raise ValueError(
            f"max_new_tokens must be <= max_len - P + 1 = {c.max_len - P + 1}: "
            f"prompt length P = {P} + max_new_tokens {max_new_tokens} - 1 must be "
            f"<= max_len = {c.max_len}"
        )
    return lengths


def _lengths(name: str, lengths: Lengths, ids: torch.Tensor) -> torch.Tensor:
    """Return ``lengths`` as ``(B,)`` on ``ids``' device; full rows if ``None``."""
    B, L = ids.shape
    if lengths is None:
        return torch.full((B,), L, device=ids.device)
    lengths = torch.as_tensor(lengths, device=ids.device)
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers, got dtype {lengths.dtype}")
    if lengths.shape != (B,) or int(lengths.min()) < 1 or int(lengths.max()) > L:
        raise ValueError(
            f"{name} must have shape (B,) = ({B},) with values in [1, {L}], "
            f"got {lengths.tolist()}"
        )
    return lengths


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
    :func:`~transformer.data.batches.lm_batch`). Each answer may be up to twice as
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
        # An answer may be twice as long as its target, if the model allows it.
        longest = min(2 * max(len(e.target) for e in chunk) + 1, model.config.max_len)
        rows = [
            (BOS_ID,) * isinstance(model, DecoderOnlyTransformer) + e.source + (EOS_ID,)
            for e in chunk
        ]
        device = next(model.parameters()).device
        # (B, S)
        ids = pad_ids(rows).to(device)
        # (B,)
        lengths = torch.tensor([len(r) for r in rows], device=device)
        if isinstance(model, Transformer):
            out = greedy_decode(model, ids, lengths, max_len=longest)
        else:
            room = model.config.max_len - ids.shape[1] + 1
            out = greedy_generate(
                model, ids, lengths, max_new_tokens=min(longest, room), prefix=prefix
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
