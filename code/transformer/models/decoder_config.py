"""The config of the decoder-only language model, with its closed-form parameter count.

:class:`DecoderOnlyConfig` extends the shared
:class:`~transformer.models.config.StackConfig` with what only a language
model has: one vocabulary, grouped key/value heads, rotary positions, and the
options by which published decoders differ from the paper (GPT-2 neither
scales its embeddings nor biases its output projection; LLaMA-3 turns its
rotary positions with another base).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from ..checks.tensors import (
    check_divisible,
    check_positive_float,
    check_positive_int,
)
from .config import StackConfig


@dataclass(frozen=True)
class DecoderOnlyConfig(StackConfig):
    """Describe a decoder-only language model, a ``DecoderOnlyTransformer``.

    ``vocab_size`` comes first; every other field, these and those of
    :class:`~transformer.models.config.StackConfig`, is keyword-only. With
    ``norm_first=True``, ``norm="rms"``, ``activation="swiglu"``,
    ``positional="rope"`` and ``n_kv_heads < h`` the model is a LLaMA-style
    decoder.

    Attributes:
        vocab_size: Vocabulary size ``V`` of the inputs and the output logits.
        n_kv_heads: Key and value heads of grouped-query attention; must
            divide ``h``. ``None`` means ``h``. With ``n_kv_heads`` set or
            ``positional="rope"``, the layers' attention has no biases, as
            LLaMA's; otherwise it keeps the paper's biases.
        scale_embeddings: Multiply the token embeddings by ``sqrt(d_model)``,
            as the paper does (``True``); GPT-2 and LLaMA do not.
        output_bias: Whether the output projection has a bias (``True``);
            GPT-2's and LLaMA's have none.
        rope_base: The base of the rotary angles, ``10000`` (RoPE, LLaMA 1
            and 2); LLaMA 3 uses ``500000``. Read only with ``positional="rope"``.

    Raises:
        TypeError: If a field has the wrong type.
        ValueError: If a size is not positive, ``h`` does not divide
            ``d_model``, ``n_kv_heads`` does not divide ``h``, or a choice is
            unknown.
    """

    vocab_size: int
    _: KW_ONLY
    n_kv_heads: int | None = None
    scale_embeddings: bool = True
    output_bias: bool = True
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("vocab_size", self.vocab_size)
        check_positive_float("rope_base", self.rope_base)
        for name in ("scale_embeddings", "output_bias"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"{name} must be a bool, got {type(getattr(self, name)).__name__}"
                )
        if self.n_kv_heads is not None:
            check_positive_int("n_kv_heads", self.n_kv_heads)
            check_divisible("h", self.h, "n_kv_heads", self.n_kv_heads)
        if self.positional == "rope" and (self.d_model // self.h) % 2:
            raise ValueError(
                f"positional='rope' needs an even d_k = d_model // h, got "
                f"{self.d_model} // {self.h} = {self.d_model // self.h}"
            )

    @property
    def grouped(self) -> bool:
        """Whether the attention is LLaMA-style, with no biases (RoPE or kv heads)."""
        return self.n_kv_heads is not None or self.positional == "rope"

    def _attention_parameters(self) -> int:
        """Return the parameters of one attention: grouped ones have no biases."""
        if not self.grouped:
            return super()._attention_parameters()
        d, d_k = self.d_model, self.d_model // self.h
        kv = self.h if self.n_kv_heads is None else self.n_kv_heads
        return 2 * d * d + 2 * d * kv * d_k  # W_q, W_o; W_k, W_v of kv heads

    def num_parameters(self) -> int:
        """Return the model's parameter count, computed in closed form from the sizes.

        Returns:
            The number of scalar parameters, a shared matrix counted once; it
            equals :func:`~transformer.models.config.count_parameters` of the
            built model.
        """
        V = self.vocab_size
        embeddings = self._embedding_parameters((V,), V)
        no_bias = 0 if self.output_bias else V
        return self._stack_parameters(attentions_per_layer=1) + embeddings - no_bias
