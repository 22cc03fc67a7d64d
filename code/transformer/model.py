"""The paper's encoder-decoder Transformer, and where to find every complete model.

The models are built from frozen dataclass configs and map integer token ids
to logits over the vocabulary. This is the public home of every complete
model and its config: the configs and ``count_parameters`` are written in
``config.py`` and the decoder-only model in ``decoder_only.py``, and all of
them are re-exported here, so that ``from transformer.model import ...``
finds every name a training script needs.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import check_mask, check_sequence, shape_str
from ._parts import check_config, check_ids, make_positional, make_stack
from .config import DecoderOnlyConfig, StackConfig, TransformerConfig, count_parameters
from .decoder_only import DecoderOnlyTransformer
from .embedding import TokenEmbedding
from .masks import causal_mask
from .stacks import Decoder, Encoder

__all__ = [
    "Transformer",
    "DecoderOnlyTransformer",
    "StackConfig",
    "TransformerConfig",
    "DecoderOnlyConfig",
    "count_parameters",
]


class Transformer(nn.Module):
    """Translate: encode a source sequence, then predict the next target token at every position.

    Token embeddings (scaled by ``sqrt(d_model)``) plus positional
    information feed an :class:`~transformer.stacks.Encoder` and a
    :class:`~transformer.stacks.Decoder`; a linear map turns the decoder's
    output into logits over the target vocabulary. :meth:`forward` runs both
    halves; :meth:`encode` and :meth:`decode` run them separately, so that
    generation can encode the source once and decode step by step.

    Args:
        config: The sizes; see :class:`~transformer.model.TransformerConfig`.

    Attributes:
        config: The config the model was built from.
        src_embed: Source :class:`~transformer.embedding.TokenEmbedding`.
        tgt_embed: Target :class:`~transformer.embedding.TokenEmbedding`.
        positional: Positional information, shared by source and target.
        encoder: The encoder stack.
        decoder: The decoder stack.
        out_proj: Linear map from ``d_model`` to the ``V`` target logits. With
            ``share_embeddings`` its weight is the embedding matrix.

    Raises:
        TypeError: If ``config`` is not a ``TransformerConfig``.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        check_config(config, TransformerConfig)
        self.config = c = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.positional = make_positional(c)
        self.encoder = make_stack(Encoder, c)
        self.decoder = make_stack(Decoder, c)
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.share_embeddings:
            self.tgt_embed.weight = self.src_embed.weight
            self.out_proj.weight = self.src_embed.weight

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
                attend; it must broadcast to both ``(B, h, S, S)`` and
                ``(B, h, L, S)``, so in practice it is the ``(B, 1, 1, S)``
                padding mask from :func:`~transformer.masks.padding_mask`.
            tgt_mask: Optional boolean mask over the target, ``True`` = may
                attend, broadcastable to ``(B, h, L, L)``. ``None`` means the
                causal mask; a mask given here replaces it, so it should
                include the causal part, e.g. ``causal_mask(L) & padding_mask(lengths)``.

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
        memory = self.encode(src, src_mask)  # (B, S, d_model)
        return self.decode(tgt, memory, src_mask, tgt_mask)  # (B, L, V)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Run the encoder over the source and return its output, the memory.

        Args:
            src: Source token ids.
            src_mask: Optional boolean mask, ``True`` = may attend,
                broadcastable to ``(B, h, S, S)``; usually ``(B, 1, 1, S)``.

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
        c = self.config
        check_ids("src", src, c.src_vocab_size, c.max_len)
        B, S = src.shape
        if src_mask is not None:
            check_mask("src_mask", src_mask, (B, c.h, S, S), "(B, h, S, S)")
        x = self.positional(self.src_embed(src))  # (B, S, d_model)
        return self.encoder(x, src_mask)

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
                it must broadcast to ``(B, h, L, S)``.
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
        c = self.config
        check_ids("tgt", tgt, c.tgt_vocab_size, c.max_len)
        check_sequence("memory", memory, c.d_model, "(B, S, d_model)")
        (B, L), S = tgt.shape, memory.shape[1]
        if memory.shape[0] != B:
            raise ValueError(
                f"memory must have shape (B, S, d_model) with B={B} as in tgt, "
                f"got shape {shape_str(memory.shape)}"
            )
        if src_mask is not None:
            check_mask("src_mask", src_mask, (B, c.h, L, S), "(B, h, L, S)")
        if tgt_mask is None:
            tgt_mask = causal_mask(L, device=tgt.device)  # (L, L)
        else:
            check_mask("tgt_mask", tgt_mask, (B, c.h, L, L), "(B, h, L, L)")
        x = self.positional(self.tgt_embed(tgt))  # (B, L, d_model)
        x = self.decoder(x, memory, tgt_mask, src_mask)
        return self.out_proj(x)  # (B, L, V)
