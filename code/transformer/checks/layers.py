"""The checks of the layers and stacks: their options, and the inputs of a call."""

from __future__ import annotations

from .contract import contract
from .masks import check_attention_mask
from .tensors import (
    check_choice,
    check_like,
    check_mask,
    check_positive_int,
    check_sequence,
    shape_str,
)


def check_layer_options(
    d_model: object,
    h: object,
    d_ff: object,
    activation: object,
    norm: object,
    choices: tuple[tuple[str, ...], tuple[str, ...]],
) -> None:
    """Check the sizes of a layer and the names of its parts, against ``choices``:
    the known feed-forward networks and norms."""
    for name, value in (("d_model", d_model), ("h", h), ("d_ff", d_ff)):
        check_positive_int(name, value)
    check_choice("activation", activation, choices[0])
    check_choice("norm", norm, choices[1])


def check_stack_options(N: object, final_norm: object) -> None:
    """Check a stack's number of layers and its ``final_norm`` (bool or None)."""
    check_positive_int("N", N)
    if final_norm is not None and not isinstance(final_norm, bool):
        raise TypeError(
            f"final_norm must be a bool or None, got {type(final_norm).__name__}"
        )


@contract
def check_encoder_inputs(module: object, x: object, mask: object) -> None:
    """Check the arguments of an encoder layer or stack: a sequence and its mask."""
    weight = next(module.parameters())
    check_sequence("x", x, module.d_model, "(B, L, d_model)", weight)
    B, L, _ = x.shape
    if mask is not None:
        check_attention_mask(
            "mask", mask, (B, module.h, L, L), "(B, h, L, L)", device=x.device
        )


@contract
def check_decoder_inputs(
    module: object, x: object, memory: object, self_mask: object, cross_mask: object
) -> None:
    """Check the arguments of a decoder layer or stack: target, memory, two masks.

    ``cross_mask`` must be 4-D: a 2-D ``(B, S)`` padding mask would be read as
    ``(L, S)``, and silently so when ``B == L``.
    """
    weight = next(module.parameters())
    check_sequence("x", x, module.d_model, "(B, L, d_model)", weight)
    check_sequence("memory", memory, module.d_model, "(B, S, d_model)")
    (B, L, _), S, h = x.shape, memory.shape[1], module.h
    if memory.shape[0] != B:
        raise ValueError(
            f"memory must have shape (B, S, d_model) with B={B} as in x, "
            f"got shape {shape_str(memory.shape)}"
        )
    check_like("memory", memory, x, "x")
    if self_mask is not None:
        target = (B, h, L, L)
        check_attention_mask(
            "self_mask", self_mask, target, "(B, h, L, L)", device=x.device
        )
    if cross_mask is not None:
        target, where = (B, h, L, S), "(B, h, L, S)"
        check_mask(
            "cross_mask", cross_mask, target, where, device=x.device, batched=True
        )
