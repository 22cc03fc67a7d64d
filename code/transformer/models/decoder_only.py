"""A decoder-only language model: self-attention layers under a causal mask."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.models import check_config, check_decoder_only_inputs
from ..parts.embedding import TokenEmbedding
from ..parts.gqa import GroupedQueryAttention
from ..parts.masks import CAUSAL
from ..parts.rotary import RotaryEmbedding
from .choices import POSITIONS
from .decoder_config import DecoderOnlyConfig
from .layers import EncoderLayer
from .stacks import DecoderOnlyStack, stack_norm


class DecoderOnlyTransformer(nn.Module):
    """Predict the next token at every position of a sequence: a language model.

    There is no source and so no cross-attention: each layer is
    self-attention and a feed-forward network, as in the encoder, and what
    makes the stack a decoder is the causal mask, which keeps every position
    from seeing the tokens after it. The config chooses the parts by name:
    with ``norm_first=True``, ``norm="rms"``, ``activation="swiglu"``,
    ``positional="rope"`` and ``n_kv_heads < h``, it is a LLaMA-style decoder.

    Every layer's self-attention is a
    :class:`~transformer.parts.gqa.GroupedQueryAttention`, which with
    ``n_kv_heads == h`` (the default) is multi-head attention; it is also the
    attention that can hold a :class:`~transformer.parts.kv_cache.KVCache`.

    Args:
        config: The sizes; see
            :class:`~transformer.models.decoder_config.DecoderOnlyConfig`.

    Attributes:
        config: The config the model was built from.
        embed: The :class:`~transformer.parts.embedding.TokenEmbedding`.
        positional: What is added to the embeddings: positions and dropout,
            or with ``positional="rope"`` dropout only.
        rope: The :class:`~transformer.parts.rotary.RotaryEmbedding` that every
            layer's attention uses, or ``None``.
        stack: The :class:`~transformer.models.stacks.DecoderOnlyStack` of
            ``N`` layers and the final norm.
        out_proj: Linear map from ``d_model`` to the ``V`` logits, with a bias
            if ``output_bias``. With ``share_embeddings`` its weight is the
            embedding matrix.

    Raises:
        TypeError: If ``config`` is not a ``DecoderOnlyConfig``.
    """

    def __init__(self, config: DecoderOnlyConfig) -> None:
        check_config(config, DecoderOnlyConfig)
        super().__init__()
        self.config = c = config
        self.embed = TokenEmbedding(c.vocab_size, c.d_model, scale=c.scale_embeddings)
        self.positional = POSITIONS[c.positional](
            c.d_model, c.max_len, dropout=c.dropout
        )
        rotary = c.positional == "rope"
        d_k = c.d_model // c.h
        self.rope = (
            RotaryEmbedding(d_k, c.max_len, base=c.rope_base) if rotary else None
        )
        layers = [
            EncoderLayer(
                c.d_model, c.h, c.d_ff, self_attn=self.attention(), **c.layer_options()
            )
            for _ in range(c.N)
        ]
        self.stack = DecoderOnlyStack(layers, stack_norm(c.d_model, c.layer_options()))
        self.out_proj = nn.Linear(c.d_model, c.vocab_size, bias=c.output_bias)
        if c.share_embeddings:
            self.out_proj.weight = self.embed.weight

    def attention(self) -> GroupedQueryAttention:
        """Build one layer's self-attention from the config."""
        c = self.config
        return GroupedQueryAttention(
            c.d_model,
            c.h,
            n_kv_heads=c.n_kv_heads,
            rope=self.rope,
            dropout=c.dropout,
            bias=not c.grouped,
        )

    @entry
    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, start: int = 0
    ) -> torch.Tensor:
        """Return the logits of the next token at every position.

        Args:
            x: Token ids.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, S)``. ``None`` means the causal mask, which
                is never built (:data:`~transformer.parts.masks.CAUSAL`); a mask
                given here replaces it (e.g. a prefix-LM mask, or
                ``causal_mask(L) & padding_mask(lengths)``).
            start: The position of the first token of ``x``: 0, unless ``x``
                continues ``start`` tokens that the model has seen already,
                whose keys and values a
                :class:`~transformer.parts.kv_cache.KVCache` keeps. Then
                ``S = start + L``.

        Returns:
            Unnormalised logits over the vocabulary.

        Shape:
            - x: ``(B, L)``
            - mask: broadcastable to ``(B, h, L, S)``
            - output: ``(B, L, V)``

        Raises:
            TypeError: If ``x`` is not an integer tensor or ``mask`` not boolean.
            ValueError: If an id is outside the vocabulary, ``x`` is empty,
                ``start + L`` is more than ``max_len``, or ``mask`` or
                ``start`` does not fit.
        """
        check_decoder_only_inputs(self, x, mask, start)
        if mask is None:
            # each token sees itself and every token before it; never built
            mask = CAUSAL
        # (B, L, d_model)
        hidden = self.positional(self.embed(x), start)
        hidden = self.stack(hidden, mask)
        # (B, L, V)
        return self.out_proj(hidden)
