"""The configs of the complete models, and their parameter counts in closed form.

Each model of ``transformer.models.encoder_decoder`` is built from one frozen dataclass
config (the decoder-only model's is in ``transformer.models.decoder_config``), so
that a model's shape is a single value that can be printed, compared and saved.
A config knows its model's parameter count in closed form
(``config.num_parameters()``), which the tests compare with ``count_parameters``
of a built model. The package's ``__init__`` exports
them with the models.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn as nn

from ..checks.tensors import (
    check_choice,
    check_divisible,
    check_positive_float,
    check_positive_int,
    check_probability,
)
from .choices import FEED_FORWARDS, NORMS, POSITIONS


@dataclass(frozen=True, kw_only=True)
class StackConfig:
    """The sizes that both models share: their layers, stacks and positions.

    The defaults are the paper's base model, except that the embeddings are
    not shared unless asked (``base()`` shares them). Every field is
    keyword-only.

    Attributes:
        d_model: Width of every token representation (512 in the paper).
        h: Number of attention heads (8); must divide ``d_model``.
        N: Number of layers in each stack (6).
        d_ff: Hidden width of the feed-forward networks (2048).
        dropout: Dropout probability everywhere, in training only (0.1).
        max_len: Longest sequence the positional information covers.
        activation: ``"relu"`` (the paper), ``"gelu"``, ``"gelu_tanh"`` (GPT-2's
            tanh approximation of GELU), or ``"swiglu"`` for a
            gated :class:`~transformer.parts.swiglu.SwiGLU` network of hidden width
            ``d_ff``.
        norm_first: ``False`` for post-norm layers (the paper), ``True`` for
            pre-norm; pre-norm stacks end with a final norm.
        positional: ``"sinusoidal"`` (the paper) or ``"learned"``; a
            decoder-only model may also use ``"rope"``.
        share_embeddings: Use one matrix for the token embeddings and the
            output projection, as the paper does (section 3.4).
        norm: ``"layer"`` (the paper) or ``"rms"``
            (:class:`~transformer.parts.rmsnorm.RMSNorm`).
        norm_eps: The ``eps`` of every norm (``1e-5``, as LLaMA 2 and later;
            LLaMA 1 uses ``1e-6``).

    Raises:
        TypeError: If a field has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, or a choice is unknown.
    """

    d_model: int = 512
    h: int = 8
    N: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 1024
    activation: str = "relu"
    norm_first: bool = False
    positional: str = "sinusoidal"
    share_embeddings: bool = False
    norm: str = "layer"
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("d_model", "h", "N", "d_ff", "max_len"):
            check_positive_int(name, getattr(self, name))
        check_divisible("d_model", self.d_model, "h", self.h)
        check_probability("dropout", self.dropout)
        check_choice("activation", self.activation, tuple(FEED_FORWARDS))
        check_choice("positional", self.positional, tuple(POSITIONS))
        check_choice("norm", self.norm, tuple(NORMS))
        check_positive_float("norm_eps", self.norm_eps)
        for name in ("norm_first", "share_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"{name} must be a bool, got {type(getattr(self, name)).__name__}"
                )

    def layer_options(self) -> dict[str, object]:
        """The options every layer and stack of the model is built with."""
        return {
            "dropout": self.dropout,
            "activation": self.activation,
            "norm_first": self.norm_first,
            "norm": self.norm,
            "eps": self.norm_eps,
        }

    def _stack_parameters(self, attentions_per_layer: int) -> int:
        """Return the closed-form parameter count of one stack of ``N`` layers."""
        d, d_ff = self.d_model, self.d_ff
        attention = self._attention_parameters()
        if self.activation == "swiglu":
            feed_forward = 3 * d * d_ff  # w_gate, w_up, w_down, no biases
        else:
            feed_forward = d * d_ff + d_ff + d_ff * d + d
        norm = d if self.norm == "rms" else 2 * d  # gain (and bias)
        layer = attentions_per_layer * (attention + norm) + feed_forward + norm
        return self.N * layer + (norm if self.norm_first else 0)

    def _attention_parameters(self) -> int:
        """Return the closed-form parameter count of one multi-head attention."""
        return 4 * (self.d_model**2 + self.d_model)  # W_q, W_k, W_v, W_o, biases

    def _embedding_parameters(self, vocab_sizes: tuple[int, ...], V_out: int) -> int:
        """Return the closed-form parameter count of embeddings and output map."""
        tables = (max(vocab_sizes),) if self.share_embeddings else (*vocab_sizes, V_out)
        positions = self.max_len * self.d_model if self.positional == "learned" else 0
        return sum(tables) * self.d_model + V_out + positions


@dataclass(frozen=True)
class TransformerConfig(StackConfig):
    """Describe an encoder-decoder
    :class:`~transformer.models.encoder_decoder.Transformer`.

    The two vocabulary sizes come first; every field of :class:`StackConfig`
    follows as a keyword argument, with the paper's base model as default
    (but unshared embeddings).
    :meth:`base` and :meth:`big` give the paper's two configurations by name.

    Attributes:
        src_vocab_size: Source vocabulary size.
        tgt_vocab_size: Target vocabulary size ``V`` of the output logits.

    Raises:
        TypeError: If a field has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, a choice is unknown, or ``share_embeddings`` is set
            with two different vocabulary sizes.
    """

    src_vocab_size: int
    tgt_vocab_size: int

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("src_vocab_size", self.src_vocab_size)
        check_positive_int("tgt_vocab_size", self.tgt_vocab_size)
        if self.positional == "rope":
            raise ValueError(
                "positional='rope' is for DecoderOnlyConfig only: the "
                "encoder-decoder model takes 'sinusoidal' or 'learned'"
            )
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs one vocabulary: got src_vocab_size="
                f"{self.src_vocab_size} and tgt_vocab_size={self.tgt_vocab_size}"
            )

    @classmethod
    def base(cls, vocab_size: int) -> TransformerConfig:
        """Return the paper's base model over a shared vocabulary of ``vocab_size``.

        d_model=512, h=8, N=6, d_ff=2048, dropout=0.1, with the embeddings
        and the output projection sharing one matrix. With the paper's
        vocabulary of about 37000 tokens it has about 63M parameters (the
        paper reports 65M).

        Args:
            vocab_size: Size of the vocabulary shared by source and target.

        Returns:
            The config.

        Raises:
            TypeError: If ``vocab_size`` is not an int.
            ValueError: If ``vocab_size`` is not positive.
        """
        return cls(vocab_size, vocab_size, share_embeddings=True)

    @classmethod
    def big(cls, vocab_size: int) -> TransformerConfig:
        """Return the paper's big model: d_model=1024, h=16, d_ff=4096, dropout=0.3.

        N=6 and shared embeddings as in :meth:`base`; about 214M parameters
        with 37000 tokens (the paper reports 213M).

        Args:
            vocab_size: Size of the vocabulary shared by source and target.

        Returns:
            The config.

        Raises:
            TypeError: If ``vocab_size`` is not an int.
            ValueError: If ``vocab_size`` is not positive.
        """
        return cls(
            vocab_size,
            vocab_size,
            d_model=1024,
            h=16,
            d_ff=4096,
            dropout=0.3,
            share_embeddings=True,
        )

    def num_parameters(self) -> int:
        """Return the model's parameter count, computed in closed form from the sizes.

        Returns:
            The number of scalar parameters, a shared matrix counted once; it
            equals :func:`count_parameters` of the built model.
        """
        return (
            self._stack_parameters(attentions_per_layer=1)
            + self._stack_parameters(attentions_per_layer=2)
            + self._embedding_parameters(
                (self.src_vocab_size, self.tgt_vocab_size), self.tgt_vocab_size
            )
        )


def count_parameters(model: nn.Module) -> int:
    """Return the number of distinct parameters (a shared matrix counts once).

    Args:
        model: Any module.

    Returns:
        The total number of scalar parameters.

    Raises:
        TypeError: If ``model`` is not an ``nn.Module``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters())
