"""Checks of what kind of model a routine was given, by what the model has.

This folder imports nothing from the package's other folders, so it cannot
ask ``isinstance(model, Transformer)``. It asks what a routine will use: an
encoder-decoder has ``encode`` and ``decode`` methods; a decoder-only model
has neither, and its ``config`` has a single ``vocab_size``.
"""

from __future__ import annotations

import torch.nn as nn


def is_encoder_decoder(model: object) -> bool:
    """Whether ``model`` is a module with ``encode`` and ``decode`` methods."""
    return (
        isinstance(model, nn.Module)
        and callable(getattr(model, "encode", None))
        and callable(getattr(model, "decode", None))
    )


def is_decoder_only(model: object) -> bool:
    """Whether ``model`` is a module with ``config.vocab_size`` and no encoder."""
    config = getattr(model, "config", None)
    return (
        isinstance(model, nn.Module)
        and hasattr(config, "vocab_size")
        and not is_encoder_decoder(model)
    )


def check_encoder_decoder(model: object) -> None:
    """Raise ``TypeError`` unless ``model`` is an encoder-decoder ``Transformer``."""
    if not is_encoder_decoder(model):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")


def check_decoder_only(model: object) -> None:
    """Raise ``TypeError`` unless ``model`` is a ``DecoderOnlyTransformer``."""
    if not is_decoder_only(model):
        raise TypeError(
            f"model must be a DecoderOnlyTransformer, got {type(model).__name__}"
        )


def check_either_model(model: object) -> None:
    """Raise ``TypeError`` unless ``model`` is one of the two complete models."""
    if not (is_encoder_decoder(model) or is_decoder_only(model)):
        raise TypeError(
            f"model must be a Transformer or DecoderOnlyTransformer, "
            f"got {type(model).__name__}"
        )
