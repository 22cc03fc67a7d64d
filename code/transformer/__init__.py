"""A readable Transformer, one concept per module, for *The Executable Transformer*.

Shape letters, used in every docstring and shape comment of the package:

=========== ==============================================================
``B``       batch size
``L``       query (target) sequence length
``S``       key (source) sequence length
``h``       number of attention heads
``d_model`` width of every token representation
``d_k``     width of one head's queries and keys, ``d_model // h``
``d_v``     width of one head's values (``d_k`` in this package)
``d_ff``    hidden width of the position-wise feed-forward network
``V``       vocabulary size
``N``       number of stacked encoder or decoder layers
=========== ==============================================================

Tensors are batch first: ``(B, L, d_model)``. Masks are boolean and ``True``
means *may attend*; they broadcast to ``(B, h, L, S)``.
"""

from .checks.contract import no_checks, set_checks
from .models.config import StackConfig, TransformerConfig, count_parameters
from .models.decoder_config import DecoderOnlyConfig
from .models.decoder_only import DecoderOnlyTransformer
from .models.encoder_decoder import Transformer
from .models.layers import DecoderLayer, EncoderLayer
from .models.stacks import Decoder, Encoder
from .parts.attention import scaled_dot_product_attention
from .parts.embedding import TokenEmbedding
from .parts.feedforward import PositionwiseFeedForward
from .parts.masks import causal_mask, padding_mask, prefix_lm_mask
from .parts.multihead import MultiHeadAttention
from .parts.norm import AddNorm, LayerNorm
from .parts.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .repro import provenance, seed_everything, setup
from .tools.interop import from_torch, to_torch, to_torch_mask

__version__ = "0.1.0"

__all__ = [
    "AddNorm",
    "Decoder",
    "DecoderLayer",
    "DecoderOnlyConfig",
    "DecoderOnlyTransformer",
    "Encoder",
    "EncoderLayer",
    "LayerNorm",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "PositionwiseFeedForward",
    "SinusoidalPositionalEncoding",
    "StackConfig",
    "TokenEmbedding",
    "Transformer",
    "TransformerConfig",
    "__version__",
    "causal_mask",
    "count_parameters",
    "from_torch",
    "padding_mask",
    "no_checks",
    "prefix_lm_mask",
    "provenance",
    "scaled_dot_product_attention",
    "seed_everything",
    "set_checks",
    "setup",
    "to_torch",
    "to_torch_mask",
]

# Part II: beyond 2017.
from .inference.generate import generate, next_token
from .parts.flash_attention import flash_attention
from .parts.gqa import GroupedQueryAttention
from .parts.kv_cache import KVCache
from .parts.rmsnorm import RMSNorm
from .parts.rotary import RotaryEmbedding
from .parts.swiglu import SwiGLU
from .parts.tiled_attention import tiled_attention
from .tools.cost import count_flops, largest_tensor
from .tools.huggingface import from_hf, load_pretrained, to_hf
from .tools.record import record_attention
from .training.ablation import (
    ablation_configs,
    run_ablation,
    summarise_ablation,
    time_per_step,
)
from .training.baselines import bigram_bits, unigram_bits
from .training.charlm import CharCorpus, bits_per_char, book_chapters, train_lm

__all__ += [
    "CharCorpus",
    "ablation_configs",
    "bigram_bits",
    "GroupedQueryAttention",
    "KVCache",
    "RMSNorm",
    "RotaryEmbedding",
    "SwiGLU",
    "bits_per_char",
    "book_chapters",
    "count_flops",
    "flash_attention",
    "from_hf",
    "generate",
    "largest_tensor",
    "load_pretrained",
    "next_token",
    "record_attention",
    "run_ablation",
    "summarise_ablation",
    "time_per_step",
    "tiled_attention",
    "to_hf",
    "train_lm",
    "unigram_bits",
]
