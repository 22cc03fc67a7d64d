"""The paper's encoder-decoder Transformer: source ids in, target logits out."""

from __future__ import annotations

import torch
import torch.nn as nn

from ..checks.contract import entry
from ..checks.models import (
    check_config,
    check_decode_inputs,
    check_encode_inputs,
    check_transformer_inputs,
)
from ..parts.embedding import TokenEmbedding
from ..parts.masks import CAUSAL
from .choices import POSITIONS
from .config import TransformerConfig
from .stacks import Decoder, Encoder


class Transformer(nn.Module):
    """Translate: encode a source, then predict the next target token at every position.

    Token embeddings (scaled by ``sqrt(d_model)``) plus positional
    information feed an :class:`~transformer.models.stacks.Encoder` and a
    :class:`~transformer.models.stacks.Decoder`; a linear map turns the decoder's
    output into logits over the target vocabulary. :meth:`forward` runs both
    halves; :meth:`encode` and :meth:`decode` run them separately, so that
    generation can encode the source once and decode step by step.

    Args:
        config: The sizes; see :class:`~transformer.models.config.TransformerConfig`.

    Attributes:
        config: The config the model was built from.
        src_embed: Source :class:`~transformer.parts.embedding.TokenEmbedding`.
        tgt_embed: Target :class:`~transformer.parts.embedding.TokenEmbedding`.
        positional: Positional information, shared by source and target.
        encoder: The encoder stack.
        decoder: The decoder stack.
        out_proj: Linear map from ``d_model`` to the ``V`` target logits. With
            ``share_embeddings`` its weight is the embedding matrix.

    Raises:
        TypeError: If ``config`` is not a ``TransformerConfig``.
    """

    def __init__(self, config: TransformerConfig) -> None:
        check_config(config, TransformerConfig)
        super().__init__()
        self.config = c = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.positional = POSITIONS[c.positional](
            c.d_model, c.max_len, dropout=c.dropout
        )
        self.encoder = Encoder(c.d_model, c.h, c.d_ff, c.N, **c.layer_options())
        self.decoder = Decoder(c.d_model, c.h, c.d_ff, c.N, **c.layer_options())
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.share_embeddings:
            self.tgt_embed.weight = self.src_embed.weight
            self.out_proj.weight = self.src_embed.weight

    @entry
    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Return the logits of the next target token at every target position.

        Args:
            src: Source token ids.
            tgt: Target token ids, shifted right (they start with BOS).
            src_mask: Optional boolean mask over the source, ``True`` = may
                attend. It serves the encoder's self-attention and the
                decoder's cross-attention, so it must broadcast to both
                ``(B, h, S, S)`` and ``(B, h, L, S)``. It must also be 4-D,
                because a source mask differs between sequences and
                broadcasting lines shapes up from the right: a 2-D mask would
                be read as ``(S, S)``, one for every sequence, so a ``(B, S)``
                mask with ``B == S`` would pass with the wrong meaning. In
                practice it is the ``(B, 1, 1, S)`` padding mask from
                :func:`~transformer.parts.masks.padding_mask`; a ``(B, S)``
                mask needs ``mask[:, None, None, :]``.
            tgt_mask: Optional boolean mask over the target, ``True`` = may
                attend, broadcastable to ``(B, h, L, L)``. ``None`` means the
                causal mask; a mask given here replaces it, so it should
                include the causal part, e.g.
                ``causal_mask(L) & padding_mask(lengths)``.

        Returns:
            Unnormalised logits over the target vocabulary.

        Shape:
            - src: ``(B, S)``
            - tgt: ``(B, L)``
            - output: ``(B, L, V)``

        Raises:
            TypeError: If the ids are not integer tensors or a mask is not boolean.
            ValueError: If an id is outside its vocabulary, a sequence is empty
                or longer than ``max_len``, or a shape does not fit.
        """
        check_transformer_inputs(self, src, tgt, src_mask, tgt_mask)
        # (B, S, d_model)
        memory = self.encode(src, src_mask)
        # (B, L, V)
        return self.decode(tgt, memory, src_mask, tgt_mask)

    @entry
    def encode(
        self, src: torch.Tensor, src_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Run the encoder over the source and return its output, the memory.

        Args:
            src: Source token ids.
            src_mask: Optional boolean mask, ``True`` = may attend,
                broadcastable to ``(B, h, S, S)`` and 4-D, as in :meth:`forward`:
                usually the ``(B, 1, 1, S)`` padding mask.

        Returns:
            The memory that :meth:`decode` attends to.

        Shape:
            - src: ``(B, S)``
            - output: ``(B, S, d_model)``

        Raises:
            TypeError: If ``src`` is not an integer tensor or ``src_mask`` not boolean.
            ValueError: If an id is outside the source vocabulary, ``src`` is
                empty or longer than ``max_len``, or ``src_mask`` does not fit.
        """
        check_encode_inputs(self, src, src_mask)
        # (B, S, d_model)
        x = self.positional(self.src_embed(src))
        return self.encoder(x, src_mask)

    @entry
    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run the decoder over the target, attending to ``memory``, and return logits.

        Args:
            tgt: Target token ids so far.
            memory: The output of :meth:`encode`.
            src_mask: The source mask given to :meth:`encode`, or ``None``;
                4-D, as in :meth:`forward`, and broadcastable to ``(B, h, L, S)``.
            tgt_mask: Optional boolean mask, ``True`` = may attend,
                broadcastable to ``(B, h, L, L)``; ``None`` means causal.

        Returns:
            Unnormalised logits over the target vocabulary.

        Shape:
            - tgt: ``(B, L)``
            - memory: ``(B, S, d_model)``
            - output: ``(B, L, V)``

        Raises:
            TypeError: If ``tgt`` is not an integer tensor, ``memory`` not a
                floating-point tensor or a mask not boolean.
            ValueError: If an id is outside the target vocabulary, ``tgt`` is
                empty or longer than ``max_len``, or a shape does not fit.
        """
        check_decode_inputs(self, tgt, memory, src_mask, tgt_mask)
        if tgt_mask is None:
            # the causal mask, never built: PyTorch's kernel skips the future
            tgt_mask = CAUSAL
        # (B, L, d_model)
        x = self.positional(self.tgt_embed(tgt))
        x = self.decoder(x, memory, tgt_mask, src_mask)
        # (B, L, V)
        return self.out_proj(x)
