"""Pieces that both complete models build from their config, and the checks of their inputs."""

from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import check_token_ids, shape_str
from .config import StackConfig
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .stacks import Decoder, Encoder


def check_config(config: object, kind: type[StackConfig]) -> None:
    """Raise ``TypeError`` unless ``config`` is a ``kind``."""
    if not isinstance(config, kind):
        raise TypeError(f"config must be a {kind.__name__}, got {type(config).__name__}")


def check_ids(name: str, ids: object, V: int, max_len: int) -> torch.Tensor:
    """Check token ids as :func:`check_token_ids` does, and their length against ``max_len``."""
    ids = check_token_ids(name, ids, V)
    if ids.shape[1] > max_len:
        raise ValueError(
            f"{name} must have shape (B, L) with L <= max_len = {max_len}, "
            f"got shape {shape_str(ids.shape)}"
        )
    return ids


def make_positional(config: StackConfig) -> nn.Module:
    """Build the positional module a config asks for."""
    kind = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEmbedding}
    return kind[config.positional](config.d_model, config.max_len, config.dropout)


def make_stack(kind: type[Encoder] | type[Decoder], c: StackConfig) -> nn.Module:
    """Build an :class:`Encoder` or :class:`Decoder` with a config's sizes."""
    return kind(c.d_model, c.h, c.d_ff, c.N, c.dropout, c.activation, c.norm_first)
