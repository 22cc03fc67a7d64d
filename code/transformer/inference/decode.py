"""Greedy decoding: let a trained model write its answer one token at a time.

At every step the model sees everything generated so far and the most likely
next token is appended. A row stops at EOS (and is padded with PAD from then
on); the whole batch stops when every row has stopped or after ``max_len``
new tokens. Rows of different lengths share one batch: sources are
right-padded and masked, prompts are right-padded and each row reads its
next token at its own position.

The loop itself, :func:`extend`, is the one every writer in the package
uses, :func:`~transformer.inference.generate.generate` included: they differ
only in how the model gives the next token's logits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ..checks.generation import (
    Lengths,
    check_greedy_decode_args,
    check_greedy_generate_args,
)
from ..checks.model_kind import check_either_model
from ..data.tasks import Example
from ..data.tokenizer import BOS_ID, EOS_ID, PAD_ID, pad_ids
from ..models.decoder_only import DecoderOnlyTransformer
from ..models.encoder_decoder import Transformer
from ..parts.masks import padding_mask, prefix_lm_mask
from ..training.modes import evaluating


def most_likely(logits: torch.Tensor) -> torch.Tensor:
    """Return the most likely token of each row: ``(B, V)`` logits to ``(B, 1)`` ids."""
    # (B, 1)
    return logits.argmax(dim=-1, keepdim=True)


def extend(
    tokens: torch.Tensor,
    next_logits: Callable[[torch.Tensor], torch.Tensor],
    max_new_tokens: int,
    *,
    choose: Callable[[torch.Tensor], torch.Tensor] = most_likely,
    stop_at_eos: bool = True,
) -> torch.Tensor:
    """Append one chosen token per row to ``tokens``, ``max_new_tokens`` times at most.

    This is the loop of every way this package writes: ``next_logits`` runs
    the model on the tokens so far and returns each row's next-token logits,
    ``choose`` picks a token from them. With ``stop_at_eos``, a row that has
    written EOS gets PAD from then on, and the loop ends once every row has.
    Its callers check their inputs; this loop does not.

    Args:
        tokens: The tokens so far; may have no columns.
        next_logits: Maps the tokens so far, ``(B, t)``, to logits ``(B, V)``.
        max_new_tokens: The most tokens to append.
        choose: Maps logits ``(B, V)`` to one token per row, ``(B, 1)``.
        stop_at_eos: Stop each row at its first EOS.

    Returns:
        ``tokens`` followed by the new tokens.

    Shape:
        - tokens: ``(B, t)``
        - output: ``(B, t + T)`` with ``T <= max_new_tokens``
    """
    # (B,)
    done = torch.zeros(tokens.shape[0], dtype=torch.bool, device=tokens.device)
    for _ in range(max_new_tokens):
        # (B, 1)
        new = choose(next_logits(tokens))
        if stop_at_eos:
            new = new.masked_fill(done[:, None], PAD_ID)
            done |= new[:, 0] == EOS_ID
        # (B, t + 1)
        tokens = torch.cat([tokens, new], dim=1)
        if stop_at_eos and done.all():
            break
    return tokens


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
    lengths = check_greedy_decode_args(model, src, src_lengths, max_len)
    # (B, 1, 1, S)
    src_mask = padding_mask(lengths, src.shape[1])
    # (B, 1)
    bos = torch.full((src.shape[0], 1), BOS_ID, device=src.device)
    with evaluating(model):
        # (B, S, d_model)
        memory = model.encode(src, src_mask)

        def next_logits(out: torch.Tensor) -> torch.Tensor:
            # (B, V): the decoder reads BOS and the tokens so far
            return model.decode(out, memory, src_mask)[:, -1]

        # (B, T)
        return extend(bos, next_logits, max_len)[:, 1:]


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
    lengths = check_greedy_generate_args(model, prompt, prompt_lengths, max_new_tokens)
    (B, P), device = prompt.shape, prompt.device
    # (B,)
    rows = torch.arange(B, device=device)
    # (B, P + T): row b's new tokens start at its own position lengths[b]
    seq = torch.full((B, P + max_new_tokens), PAD_ID, device=device)
    seq[:, :P] = prompt.masked_fill(~padding_mask(lengths, P)[:, 0, 0], PAD_ID)

    def next_logits(new: torch.Tensor) -> torch.Tensor:
        t = new.shape[1]
        if t:
            seq[rows, lengths + t - 1] = new[:, -1]
        L = int(lengths.max()) + t
        # Row b's tokens after position lengths[b] + t - 1 are padding in its
        # future: the causal (or prefix-LM) mask hides them from the position
        # that predicts.
        mask = prefix_lm_mask(lengths, L) if prefix else None
        # (B, V), read at each row's own last position
        return model(seq[:, :L], mask)[rows, lengths + t - 1]

    with evaluating(model):
        # (B, T)
        return extend(seq[:, :0], next_logits, max_new_tokens)


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
    check_either_model(model)
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
