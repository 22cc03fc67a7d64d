"""The parts a config chooses by name: norms, feed-forward networks, positions.

A config names its parts with strings (``norm="rms"``, ``activation="swiglu"``,
``positional="rope"``); the layers and models look the names up here. The
paper's parts and those of Part II sit side by side in these tables, so the
model code builds whichever a config asks for without a branch of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch.nn as nn

from ..parts.feedforward import PositionwiseFeedForward
from ..parts.norm import LayerNorm
from ..parts.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from ..parts.rmsnorm import RMSNorm
from ..parts.rotary import EmbeddingDropout
from ..parts.swiglu import SwiGLU

NORMS: dict[str, type[nn.Module]] = {"layer": LayerNorm, "rms": RMSNorm}
"""The normalisations by name; ``NORMS[name](d_model, eps)`` builds one."""

FEED_FORWARDS: dict[str, Callable[..., nn.Module]] = {
    "relu": partial(PositionwiseFeedForward, activation="relu"),
    "gelu": partial(PositionwiseFeedForward, activation="gelu"),
    "gelu_tanh": partial(PositionwiseFeedForward, activation="gelu_tanh"),
    "swiglu": SwiGLU,
}
"""The feed-forward networks by activation; ``FEED_FORWARDS[name](d_model, d_ff,
dropout=p)`` builds one."""

POSITIONS: dict[str, Callable[..., nn.Module]] = {
    "sinusoidal": SinusoidalPositionalEncoding,
    "learned": LearnedPositionalEmbedding,
    "rope": lambda d_model, max_len, *, dropout=0.0: EmbeddingDropout(dropout),
}
"""What a model adds to its embeddings, by kind; ``POSITIONS[kind](d_model,
max_len, dropout=p)`` builds it. With ``"rope"`` it is dropout only: the
attention layers turn their queries and keys instead."""
