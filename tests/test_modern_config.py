import itertools

import pytest
import torch
import torch.nn as nn

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    GroupedQueryAttention,
    LayerNorm,
    MultiHeadAttention,
    PositionwiseFeedForward,
    RMSNorm,
    SwiGLU,
    TransformerConfig,
    count_parameters,
)
from transformer.parts.rotary import EmbeddingDropout

OPTIONS = list(
    itertools.product(
        ["layer", "rms"], ["relu", "gelu", "swiglu"], ["sinusoidal", "learned", "rope"],
        [None, 1, 4], [False, True],
    )
)  # fmt: skip


@pytest.mark.parametrize(
    ("norm", "activation", "positional", "n_kv_heads", "norm_first"), OPTIONS
)
def test_decoder_only_honours_every_option_and_its_closed_form_count(
    norm, activation, positional, n_kv_heads, norm_first
):
    config = DecoderOnlyConfig(
        vocab_size=13, d_model=16, h=4, N=2, d_ff=24, max_len=12, norm=norm,
        activation=activation, positional=positional, n_kv_heads=n_kv_heads,
        norm_first=norm_first,
    )  # fmt: skip
    model = DecoderOnlyTransformer(config)
    layer = model.stack.layers[0]
    grouped = n_kv_heads is not None or positional == "rope"
    assert isinstance(
        layer.self_attn, GroupedQueryAttention if grouped else MultiHeadAttention
    )
    if grouped:
        assert layer.self_attn.n_kv_heads == (n_kv_heads or 4)
        assert (layer.self_attn.rope is not None) == (positional == "rope")
    assert isinstance(
        layer.feed_forward,
        SwiGLU if activation == "swiglu" else PositionwiseFeedForward,
    )
    assert isinstance(layer.add_norm1.norm, RMSNorm if norm == "rms" else LayerNorm)
    assert (not isinstance(model.stack.norm, nn.Identity)) == norm_first
    assert count_parameters(model) == config.num_parameters()
    logits = model(torch.randint(0, 13, (2, 12)))
    assert logits.shape == (2, 12, 13) and torch.isfinite(logits).all()


def test_llama_style_decoder_has_no_positions_table_and_shares_one_rope():
    config = DecoderOnlyConfig(
        vocab_size=13, d_model=32, h=4, n_kv_heads=2, N=3, d_ff=40, norm_first=True,
        norm="rms", activation="swiglu", positional="rope",
    )  # fmt: skip
    model = DecoderOnlyTransformer(config)
    assert isinstance(model.positional, EmbeddingDropout)
    assert all(layer.self_attn.rope is model.rope for layer in model.stack.layers)
    assert isinstance(model.stack.norm, RMSNorm)
    assert model.stack.layers[0].self_attn.w_k.weight.shape == (2 * 8, 32)


def test_rope_model_is_causal_and_sees_relative_positions_only_through_attention():
    config = DecoderOnlyConfig(
        vocab_size=13, d_model=16, h=4, N=2, d_ff=24, positional="rope"
    )
    model = DecoderOnlyTransformer(config).eval()
    x = torch.randint(0, 13, (1, 8))
    changed = x.clone()
    changed[0, 5:] = (x[0, 5:] + 1) % 13
    torch.testing.assert_close(model(x)[:, :5], model(changed)[:, :5])


def test_configs_reject_bad_new_options():
    with pytest.raises(ValueError, match="norm"):
        DecoderOnlyConfig(vocab_size=5, norm="batch")
    with pytest.raises(ValueError, match="activation"):
        DecoderOnlyConfig(vocab_size=5, activation="tanh")
    with pytest.raises(ValueError, match="h must be divisible by n_kv_heads"):
        DecoderOnlyConfig(vocab_size=5, h=8, n_kv_heads=3)
    with pytest.raises(ValueError, match="DecoderOnlyConfig only"):
        TransformerConfig(5, 5, positional="rope")
    with pytest.raises(ValueError, match="even d_k"):
        DecoderOnlyConfig(vocab_size=5, d_model=12, h=4, positional="rope")


@pytest.mark.parametrize(
    "norm, activation", [("rms", "swiglu"), ("rms", "relu"), ("layer", "swiglu")]
)
def test_encoder_decoder_takes_rms_norm_and_swiglu_too(norm, activation):
    from transformer import Transformer

    config = TransformerConfig(
        7, 9, d_model=16, h=4, N=2, d_ff=24, norm=norm, activation=activation
    )
    model = Transformer(config)
    assert count_parameters(model) == config.num_parameters()
    assert isinstance(
        model.decoder.layers[0].add_norm3.norm, RMSNorm if norm == "rms" else LayerNorm
    )
