"""A decoder-only language model: the encoder stack under a causal mask."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import contract, entry
from ..checks.ids import check_token_ids
from ..checks.tensors import check_mask, shape_str
from ..parts.embedding import TokenEmbedding
from ..parts.kv_cache import KVCache
from ..parts.masks import causal_mask
from ..parts.positional import POSITIONAL_ENCODINGS
from ..parts.rotary import RotaryEmbedding
from .config import DecoderOnlyConfig, check_config
from .stacks import Encoder


class DecoderOnlyTransformer(nn.Module):
    """Predict the next token at every position of a sequence: a language model.

    There is no source and so no cross-attention: the stack is an
    :class:`~transformer.models.stacks.Encoder` (self-attention and feed-forward
    layers), and what makes it a decoder is the causal mask, which keeps
    every position from seeing the tokens after it. The config chooses the
    parts: with ``norm_first=True``, ``norm="rms"``, ``activation="swiglu"``,
    ``positional="rope"`` and ``n_kv_heads < h``, it is a LLaMA-style decoder.

    Args:
        config: The sizes; see :class:`~transformer.models.config.DecoderOnlyConfig`.

    Attributes:
        config: The config the model was built from.
        embed: The :class:`~transformer.parts.embedding.TokenEmbedding`.
        positional: Positional information added to the embeddings; with
            ``positional="rope"``, only the dropout of the embeddings.
        rope: The :class:`~transformer.parts.rotary.RotaryEmbedding` that every
            layer's attention uses, or ``None``.
        stack: The ``N`` layers, an :class:`~transformer.models.stacks.Encoder`.
        out_proj: Linear map from ``d_model`` to the ``V`` logits. With
            ``share_embeddings`` its weight is the embedding matrix.

    Raises:
        TypeError: If ``config`` is not a ``DecoderOnlyConfig``.
    """

    def __init__(self, config: DecoderOnlyConfig) -> None:
        super().__init__()
        check_config(config, DecoderOnlyConfig)
        self.config = c = config
        self.embed = TokenEmbedding(c.vocab_size, c.d_model)
        if c.positional == "rope":
            self.positional = nn.Dropout(c.dropout)
            self.rope = RotaryEmbedding(c.d_model // c.h, c.max_len)
        else:
            kind = POSITIONAL_ENCODINGS[c.positional]
            self.positional = kind(c.d_model, c.max_len, dropout=c.dropout)
            self.rope = None
        attention = {"n_kv_heads": c.n_kv_heads, "rope": self.rope} if c.grouped else {}
        self.stack = Encoder(
            c.d_model, c.h, c.d_ff, c.N, c.dropout, c.activation, c.norm_first,
            norm=c.norm, **attention,
        )  # fmt: skip
        self.out_proj = nn.Linear(c.d_model, c.vocab_size)
        if c.share_embeddings:
            self.out_proj.weight = self.embed.weight

    @entry
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """Return the logits of the next token at every position.

        Args:
            x: Token ids.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, S)``. ``None`` means the causal mask; a mask
                given here replaces it (e.g. a prefix-LM mask, or
                ``causal_mask(L) & padding_mask(lengths)``).
            cache: A :class:`~transformer.parts.kv_cache.KVCache` of ``N`` layers
                while generating: ``x`` continues the ``T`` tokens it holds,
                their keys and values are reused, and the new ones are
                appended. Then ``S = T + L``.

        Returns:
            Unnormalised logits over the vocabulary.

        Shape:
            - x: ``(B, L)``
            - mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, V)``

        Raises:
            TypeError: If ``x`` is not an integer tensor or ``mask`` not boolean.
            ValueError: If an id is outside the vocabulary, ``x`` is empty,
                the cached and new tokens are more than ``max_len``, or
                ``mask`` or ``cache`` does not fit.
        """
        _check_forward(self, x, mask, cache)
        T, L = (0 if cache is None else cache.length), x.shape[1]
        if mask is None and T == 0:
            # (L, L)
            mask = causal_mask(L, device=x.device)
        elif mask is None and L > 1:  # new queries see the cache and their own past
            mask = torch.ones(L, T + L, dtype=torch.bool, device=x.device).tril(T)
        # (B, L, d_model)
        hidden = self.embed(x)
        hidden = self.positional(hidden) if self.rope else self.positional(hidden, T)
        hidden = self.stack(hidden, mask, cache=cache)
        # (B, L, V)
        return self.out_proj(hidden)


@contract
def _check_forward(
    model: DecoderOnlyTransformer, x: object, mask: object, cache: object
) -> None:
    """Check the arguments of :meth:`DecoderOnlyTransformer.forward`."""
    c, device = model.config, model.out_proj.weight.device
    check_token_ids("x", x, c.vocab_size, c.max_len, device)
    (B, L), T = x.shape, 0
    if cache is not None:
        if not isinstance(cache, KVCache) or len(cache) != c.N:
            raise TypeError(f"cache must be a KVCache of N={c.N} layers, got {cache!r}")
        T = cache.length
        if T + L > c.max_len:
            raise ValueError(
                f"x of shape {shape_str(x.shape)} after {T} cached tokens runs past "
                f"max_len={c.max_len}"
            )
    if mask is not None:
        letters = "(B, h, L, S)" if T else "(B, h, L, L)"
        check_mask("mask", mask, (B, c.h, L, T + L), letters, device=device)
