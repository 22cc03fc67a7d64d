"""Ask a whole model for its attention weights, for one ``with`` block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch.nn as nn


@contextmanager
def record_attention(model: nn.Module) -> Iterator[nn.Module]:
    """Make every attention module of ``model`` keep its weights inside the block.

    Attention modules (:class:`~transformer.parts.multihead.MultiHeadAttention`,
    :class:`~transformer.parts.gqa.GroupedQueryAttention`) normally run PyTorch's
    fused kernel and keep no weights. Inside ``with record_attention(model):``
    each of them computes through the package's own attention, as with
    ``need_weights=True``, and keeps the weights of its latest call in
    ``attn_weights``; on leaving the block, every module is set back as it was.

    Args:
        model: Any module; every submodule with a ``record_weights`` flag is
            switched, the model itself included.

    Yields:
        The model.

    Raises:
        TypeError: If ``model`` is not an ``nn.Module``.

    Example::

        with transformer.record_attention(model):
            model(src, tgt)
        weights = model.decoder.layers[0].cross_attn.attn_weights  # (B, h, L, S)
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    modules = [m for m in model.modules() if hasattr(m, "record_weights")]
    before = [m.record_weights for m in modules]
    for m in modules:
        m.record_weights = True
    try:
        yield model
    finally:
        for m, was in zip(modules, before):
            m.record_weights = was
