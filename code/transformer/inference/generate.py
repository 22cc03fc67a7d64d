"""Writing with a language model: sampling the next token, with or without a cache."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from ..checks.contract import entry
from ..checks.generation import check_generate_args, check_next_token_args
from ..data.placement import device_of
from ..models.decoder_only import DecoderOnlyTransformer
from ..parts.kv_cache import KVCache
from ..training.modes import evaluating
from .decode import extend


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
    check_next_token_args(logits, temperature, top_k, top_p, generator)
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
    sequence so far. Both compute the same logits up to float rounding, so
    they produce the same tokens unless two candidates nearly tie; the cache
    saves the recomputation. The model is put in evaluation mode while generating and
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
    check_generate_args(**locals())
    choose = partial(
        next_token,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        generator=generator,
    )
    # (B, P)
    prompt = prompt.to(device_of(model))
    next_logits = next_logits_of(model, use_cache=use_cache)
    with evaluating(model):
        # (B, P + max_new_tokens)
        return extend(
            prompt, next_logits, max_new_tokens, choose=choose, stop_at_eos=False
        )


def next_logits_of(
    model: DecoderOnlyTransformer, *, use_cache: bool
) -> Callable[[torch.Tensor], torch.Tensor]:
    """Return a function from the tokens so far to the logits of the next token.

    This is the one place where generation meets the KV cache. With the
    cache, the first call runs the whole prompt and every later call only
    the tokens the cache has not seen; without it, every call runs them all.

    Shape:
        the function: ``(B, t)`` to ``(B, V)``
    """
    if not use_cache:
        return lambda tokens: model(tokens)[:, -1]
    cache = KVCache(model)
    return lambda tokens: cache(tokens[:, cache.length :])[:, -1]
