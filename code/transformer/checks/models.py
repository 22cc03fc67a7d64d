"""The checks of the two models: their configs, and the inputs of a call."""

from __future__ import annotations

import torch

from .contract import contract
from .ids import check_id_range, check_id_tensor, check_token_ids
from .masks import check_attention_mask
from .tensors import check_mask, check_sequence, shape_str


def check_config(config: object, kind: type) -> None:
    """Raise ``TypeError`` unless ``config`` is a ``kind`` of config."""
    if not isinstance(config, kind):
        raise TypeError(
            f"config must be a {kind.__name__}, got {type(config).__name__}"
        )


@contract
def check_transformer_inputs(
    model: object, src: object, tgt: object, src_mask: object, tgt_mask: object
) -> None:
    """Check the arguments of the encoder-decoder's ``forward``; read ids once."""
    c, device = model.config, model.out_proj.weight.device
    check_id_tensor("src", src, c.max_len, device)
    check_id_tensor("tgt", tgt, c.max_len, device)
    (B, S), L = src.shape, tgt.shape[1]
    if tgt.shape[0] != B:
        raise ValueError(
            f"tgt must have shape (B, L) with B={B} as in src, "
            f"got shape {shape_str(tgt.shape)}"
        )
    # src_mask serves two attentions, (B, h, S, S) and (B, h, L, S)
    check_src_mask(src_mask, (B, c.h, S, S), "(B, h, S, S)", device)
    check_src_mask(src_mask, (B, c.h, L, S), "(B, h, L, S)", device)
    check_tgt_mask(tgt_mask, (B, c.h, L, L), device)
    check_id_range(("src", src, c.src_vocab_size), ("tgt", tgt, c.tgt_vocab_size))


@contract
def check_encode_inputs(model: object, src: object, src_mask: object) -> None:
    """Check the arguments of the encoder-decoder's ``encode``."""
    c, device = model.config, model.out_proj.weight.device
    check_id_tensor("src", src, c.max_len, device)
    B, S = src.shape
    check_src_mask(src_mask, (B, c.h, S, S), "(B, h, S, S)", device)
    check_id_range(("src", src, c.src_vocab_size))


@contract
def check_decode_inputs(
    model: object, tgt: object, memory: object, src_mask: object, tgt_mask: object
) -> None:
    """Check the arguments of the encoder-decoder's ``decode``."""
    c, weight = model.config, model.out_proj.weight
    check_id_tensor("tgt", tgt, c.max_len, weight.device)
    check_sequence("memory", memory, c.d_model, "(B, S, d_model)", weight)
    (B, L), S = tgt.shape, memory.shape[1]
    if memory.shape[0] != B:
        raise ValueError(
            f"memory must have shape (B, S, d_model) with B={B} as in tgt, "
            f"got shape {shape_str(memory.shape)}"
        )
    check_src_mask(src_mask, (B, c.h, L, S), "(B, h, L, S)", weight.device)
    check_tgt_mask(tgt_mask, (B, c.h, L, L), weight.device)
    check_id_range(("tgt", tgt, c.tgt_vocab_size))


def check_src_mask(
    mask: object, target: tuple[int, ...], expected: str, device: torch.device
) -> None:
    """A source mask differs between sequences, so it must be 4-D: ``(B, 1, 1, S)``."""
    if mask is not None:
        check_mask("src_mask", mask, target, expected, device=device, batched=True)


def check_tgt_mask(mask: object, target: tuple[int, ...], device: torch.device) -> None:
    """A target mask may be 2-D, ``(L, L)``, the same for every sequence."""
    if mask is not None:
        check_attention_mask("tgt_mask", mask, target, "(B, h, L, L)", device=device)


@contract
def check_decoder_only_inputs(
    model: object, x: object, mask: object, start: object
) -> None:
    """Check the arguments of the decoder-only model's ``forward``.

    ``start`` must be the number of positions that the attached KV cache
    holds: 0 without one.
    """
    c, device = model.config, model.out_proj.weight.device
    check_token_ids("x", x, c.vocab_size, c.max_len, device)
    B, L = x.shape
    if isinstance(start, bool) or not isinstance(start, int):
        raise TypeError(f"start must be an int, got {type(start).__name__}")
    if start:
        caches = [m.cache for m in model.modules() if getattr(m, "cache", None)]
        held = caches[0].length if caches else 0
        if start != held:
            raise ValueError(
                f"start must be the number of positions the KV cache holds, {held}, "
                f"got {start}; run the model through a KVCache to continue a sequence"
            )
    if start + L > c.max_len:
        raise ValueError(
            f"x of shape {shape_str(x.shape)} after {start} cached tokens runs past "
            f"max_len={c.max_len}"
        )
    if mask is not None:
        letters = "(B, h, L, S)" if start else "(B, h, L, L)"
        check_attention_mask(
            "mask", mask, (B, c.h, L, start + L), letters, device=device
        )
