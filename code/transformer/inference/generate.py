"""Writing with a language model: sampling the next token, with or without a cache."""

from __future__ import annotations

import torch

from ..checks.contract import contract, entry
from ..checks.ids import check_token_ids
from ..checks.tensors import check_positive_int, shape_str
from ..models.decoder_only import DecoderOnlyTransformer
from ..parts.kv_cache import KVCache


@entry
def next_token(
    logits: torch.Tensor,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Choose one token per row from next-token logits.

    ``temperature=0`` takes the most likely token (greedy). Otherwise the
    logits are divided by ``temperature`` (below 1 sharpens the distribution,
    above 1 flattens it), then ``top_k`` keeps the ``k`` most likely tokens,
    then ``top_p`` keeps the smallest set of most likely tokens whose
    probabilities add up to at least ``p`` (nucleus sampling), and one token is
    drawn from what is left, renormalised.

    Args:
        logits: Unnormalised scores of the next token.
        temperature: ``0`` for greedy, else the softmax temperature.
        top_k: Keep only the ``top_k`` largest logits; ``None`` keeps all.
        top_p: Keep the nucleus of probability ``top_p`` in ``(0, 1]``;
            ``None`` keeps all.
        generator: The random generator to draw from, for reproducible samples.

    Returns:
        The chosen ids.

    Shape:
        - logits: ``(B, V)``
        - output: ``(B, 1)``

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If ``logits`` is not ``(B, V)`` or a setting is out of range.
    """
    _check_next_token(logits, temperature, top_k, top_p, generator)
    if temperature == 0:
        # (B, 1)
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        # (B, 1)
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        # (B, V)
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        # (B, V)
        sorted_probs = sorted_logits.softmax(dim=-1)
        # Drop a token when the tokens more likely than it already reach top_p.
        # (B, V)
        sorted_drop = sorted_probs.cumsum(dim=-1) - sorted_probs >= top_p
        # (B, V), back in vocabulary order
        drop = sorted_drop.scatter(-1, order, sorted_drop)
        logits = logits.masked_fill(drop, float("-inf"))
    # (B, V)
    probs = logits.softmax(dim=-1)
    # (B, 1)
    return torch.multinomial(probs, 1, generator=generator)


def _check_sampling(
    temperature: object, top_k: object, top_p: object, generator: object
) -> None:
    """Check the sampling settings of :func:`next_token` and :func:`generate`."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise TypeError(
            f"temperature must be a float >= 0, got {type(temperature).__name__}"
        )
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    if top_k is not None:
        check_positive_int("top_k", top_k)
    if top_p is not None:
        if isinstance(top_p, bool) or not isinstance(top_p, (int, float)):
            raise TypeError(
                f"top_p must be a float in (0, 1], got {type(top_p).__name__}"
            )
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )


@torch.no_grad()
@entry
def generate(
    model: DecoderOnlyTransformer,
    prompt: torch.Tensor,
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    use_cache: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Continue every prompt by ``max_new_tokens`` tokens, one at a time.

    With ``use_cache=True`` the prompt goes through the model once, filling
    a :class:`~transformer.parts.kv_cache.KVCache`, and every later step feeds only
    the newest token, whose queries attend to the cached keys and values.
    With ``use_cache=False`` every step runs the model over the whole
    sequence so far. Both produce the same tokens; the cache saves the
    recomputation. The model is put in evaluation mode while generating and
    then back in the mode it was in.

    Args:
        model: A decoder-only model of any configuration.
        prompt: The prompts, all of the same length ``P``.
        max_new_tokens: How many tokens to add.
        temperature: ``0`` for greedy decoding, else the softmax temperature;
            see :func:`next_token`.
        top_k: Sample from the ``top_k`` most likely tokens only.
        top_p: Sample from the nucleus of probability ``top_p``.
        use_cache: Reuse the keys and values of earlier positions.
        generator: The random generator for sampling, for reproducible samples.

    Returns:
        The prompts followed by the new tokens, on the model's device.

    Shape:
        - prompt: ``(B, P)``
        - output: ``(B, P + max_new_tokens)``

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If ``prompt`` is not ``(B, P)`` ids, a setting is out of
            range, or ``P + max_new_tokens`` is longer than ``max_len``.
    """
    _check_generate(
        model, prompt, max_new_tokens, use_cache, temperature, top_k, top_p, generator
    )
    config = model.config
    device = next(model.parameters()).device
    # (B, P)
    sequence = prompt.to(device)
    cache = KVCache(config.N) if use_cache else None
    new = sequence
    was_training = model.training
    model.eval()
    try:
        for _ in range(max_new_tokens):
            if use_cache:
                # (B, V)
                logits = model(new, cache=cache)[:, -1]
            else:
                # (B, V)
                logits = model(sequence)[:, -1]
            # (B, 1)
            new = next_token(
                logits,
                temperature=temperature,
                top_k=top_k,
                top_p=top_p,
                generator=generator,
            )
            # (B, P + t + 1)
            sequence = torch.cat([sequence, new], dim=1)
    finally:
        model.train(was_training)
    return sequence


@contract
def _check_generate(
    model: object,
    prompt: object,
    max_new_tokens: object,
    use_cache: object,
    *sampling: object,
) -> None:
    """Check the arguments of :func:`generate`; ``sampling`` as :func:`next_token`'s."""
    if not isinstance(model, DecoderOnlyTransformer):
        raise TypeError(
            f"model must be a DecoderOnlyTransformer, got {type(model).__name__}"
        )
    config = model.config
    check_token_ids("prompt", prompt, config.vocab_size)
    check_positive_int("max_new_tokens", max_new_tokens)
    if not isinstance(use_cache, bool):
        raise TypeError(f"use_cache must be a bool, got {type(use_cache).__name__}")
    P = prompt.shape[1]
    if P + max_new_tokens > config.max_len:
        raise ValueError(
            f"prompt of shape {shape_str(prompt.shape)} plus "
            f"max_new_tokens={max_new_tokens} "
            f"is {P + max_new_tokens} positions, more than max_len={config.max_len}; "
            f"ask for at most max_new_tokens={max(config.max_len - P, 0)}"
        )
    _check_sampling(*sampling)


@contract
def _check_next_token(
    logits: object, temperature: object, top_k: object, top_p: object, generator: object
) -> None:
    """Check the arguments of :func:`next_token`."""
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        got = (
            shape_str(logits.shape)
            if isinstance(logits, torch.Tensor)
            else type(logits).__name__
        )
        raise ValueError(f"logits must have shape (B, V), got {got}")
    _check_sampling(temperature, top_k, top_p, generator)
