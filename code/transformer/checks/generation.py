"""Checks of the arguments of decoding and generation: models, ids, lengths, sampling.

Every one of them runs before the model does, so that a long generation
never fails halfway; each names the argument, what was expected and what
was received.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .contract import contract
from .ids import check_token_ids
from .model_kind import check_decoder_only, check_encoder_decoder
from .tensors import check_positive_int, shape_str

Lengths = Sequence[int] | torch.Tensor | None


def check_lengths(name: str, lengths: Lengths, ids: torch.Tensor) -> torch.Tensor:
    """Return ``lengths`` as ``(B,)`` on ``ids``' device; full rows if ``None``.

    Raises:
        TypeError: If ``lengths`` does not hold integers.
        ValueError: If it is not ``(B,)`` with values in ``[1, L]``.
    """
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


def check_greedy_decode_args(
    model: object, src: object, src_lengths: Lengths, max_len: object
) -> torch.Tensor:
    """Check ``greedy_decode``'s arguments; return the source lengths ``(B,)``."""
    check_encoder_decoder(model)
    c, device = model.config, next(model.parameters()).device
    check_token_ids("src", src, c.src_vocab_size, c.max_len, device)
    lengths = check_lengths("src_lengths", src_lengths, src)
    check_positive_int("max_len", max_len)
    if max_len > c.max_len:
        raise ValueError(
            f"max_len must be <= the model's config.max_len = {c.max_len} (the "
            f"decoder reads BOS and max_len - 1 tokens), got {max_len}"
        )
    return lengths


def check_greedy_generate_args(
    model: object, prompt: object, prompt_lengths: Lengths, max_new_tokens: object
) -> torch.Tensor:
    """Check ``greedy_generate``'s arguments; return the prompt lengths ``(B,)``."""
    check_decoder_only(model)
    c, device = model.config, next(model.parameters()).device
    check_token_ids("prompt", prompt, c.vocab_size, c.max_len, device)
    lengths = check_lengths("prompt_lengths", prompt_lengths, prompt)
    check_positive_int("max_new_tokens", max_new_tokens)
    P = prompt.shape[1]
    if P + max_new_tokens - 1 > c.max_len:
        raise ValueError(
            f"max_new_tokens must be <= max_len - P + 1 = {c.max_len - P + 1}: "
            f"prompt length P = {P} + max_new_tokens {max_new_tokens} - 1 must be "
            f"<= max_len = {c.max_len}"
        )
    return lengths


def check_sampling(
    temperature: object, top_k: object, top_p: object, generator: object
) -> None:
    """Check the sampling settings of ``next_token`` and ``generate``."""
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


@contract
def check_next_token_args(
    logits: object, temperature: object, top_k: object, top_p: object, generator: object
) -> None:
    """Check the arguments of ``next_token``: ``(B, V)`` logits and the sampling."""
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        got = (
            shape_str(logits.shape)
            if isinstance(logits, torch.Tensor)
            else type(logits).__name__
        )
        raise ValueError(f"logits must have shape (B, V), got {got}")
    check_sampling(temperature, top_k, top_p, generator)


@contract
def check_generate_args(
    model: object,
    prompt: object,
    max_new_tokens: object,
    *,
    use_cache: object,
    temperature: object,
    top_k: object,
    top_p: object,
    generator: object,
) -> None:
    """Check the arguments of ``generate``, given by name."""
    check_decoder_only(model)
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
    check_sampling(temperature, top_k, top_p, generator)
