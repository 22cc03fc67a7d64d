"""A decoder-only language model: the encoder stack under a causal mask."""

from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import check_mask, check_token_ids
from ._contract import contract, entry
from .config import DecoderOnlyConfig, check_config
from .embedding import TokenEmbedding
from .masks import causal_mask
from .positional import POSITIONAL_ENCODINGS
from .stacks import Encoder


class DecoderOnlyTransformer(nn.Module):
    """Predict the next token at every position of a sequence: a language model.

    There is no source and so no cross-attention: the stack is an
    :class:`~transformer.stacks.Encoder` (self-attention and feed-forward
    layers), and what makes it a decoder is the causal mask, which keeps
    every position from seeing the tokens after it.

    Args:
        config: The sizes; see :class:`~transformer.config.DecoderOnlyConfig`.

    Attributes:
        config: The config the model was built from.
        embed: The :class:`~transformer.embedding.TokenEmbedding`.
        positional: Positional information.
        stack: The ``N`` layers, an :class:`~transformer.stacks.Encoder`.
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
        self.positional = POSITIONAL_ENCODINGS[c.positional](
            c.d_model, c.max_len, c.dropout
        )
        self.stack = Encoder(
            c.d_model, c.h, c.d_ff, c.N, c.dropout, c.activation, c.norm_first
        )
        self.out_proj = nn.Linear(c.d_model, c.vocab_size)
        if c.share_embeddings:
            self.out_proj.weight = self.embed.weight

    @entry
    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Return the logits of the next token at every position.

        Args:
            x: Token ids.
            mask: Optional boolean mask, ``True`` = may attend, broadcastable
                to ``(B, h, L, L)``. ``None`` means the causal mask; a mask
                given here replaces it (e.g. a prefix-LM mask, or
                ``causal_mask(L) & padding_mask(lengths)``).

        Returns:
            Unnormalised logits over the vocabulary.

        Shape:
            - x: ``(B, L)``
            - mask: broadcastable to ``(B, h, L, L)``
            - output: ``(B, L, V)``

        Raises:
            TypeError: If ``x`` is not an integer tensor or ``mask`` not boolean.
            ValueError: If an id is outside the vocabulary, ``x`` is empty or
                longer than ``max_len``, or ``mask`` does not fit.
        """
        _check_forward(self.config, x, mask)
        if mask is None:
            mask = causal_mask(x.shape[1], device=x.device)  # (L, L)
        hidden = self.positional(self.embed(x))  # (B, L, d_model)
        hidden = self.stack(hidden, mask)
        return self.out_proj(hidden)  # (B, L, V)


@contract
def _check_forward(c: DecoderOnlyConfig, x: object, mask: object) -> None:
    """Check the arguments of :meth:`DecoderOnlyTransformer.forward`."""
    check_token_ids("x", x, c.vocab_size, c.max_len)
    B, L = x.shape
    if mask is not None:
        check_mask("mask", mask, (B, c.h, L, L), "(B, h, L, L)")
