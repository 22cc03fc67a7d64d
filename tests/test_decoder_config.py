import itertools

import pytest
import torch
import torch.nn.functional as F

from transformer import DecoderOnlyConfig, DecoderOnlyTransformer, count_parameters

SMALL = dict(vocab_size=37, d_model=16, h=4, N=2, d_ff=24, max_len=20, dropout=0.0)


@pytest.mark.parametrize(
    ("scale", "bias", "share", "positional", "activation"),
    list(
        itertools.product(
            [False, True], [False, True], [False, True], ["learned", "rope"],
            ["gelu_tanh", "swiglu"],
        )
    ),
)  # fmt: skip
def test_decoder_only_config_count_follows_the_new_options(
    scale, bias, share, positional, activation
):
    config = DecoderOnlyConfig(
        **SMALL, scale_embeddings=scale, output_bias=bias, share_embeddings=share,
        positional=positional, activation=activation, norm_first=True,
    )  # fmt: skip
    model = DecoderOnlyTransformer(config)
    assert count_parameters(model) == config.num_parameters()
    assert (model.out_proj.bias is not None) == bias


def test_decoder_only_config_defaults_are_the_papers():
    config = DecoderOnlyConfig(vocab_size=5)
    assert config.scale_embeddings and config.output_bias
    assert (config.norm_eps, config.rope_base) == (1e-5, 10000.0)


def test_decoder_only_embedding_scale_is_optional():
    torch.manual_seed(0)
    x = torch.randint(0, 37, (2, 6))
    for scale, factor in ((True, 16**0.5), (False, 1.0)):
        model = DecoderOnlyTransformer(
            DecoderOnlyConfig(**SMALL, scale_embeddings=scale)
        )
        expected = F.embedding(x, model.embed.weight) * factor
        torch.testing.assert_close(model.embed(x), expected, rtol=0, atol=0)


def test_decoder_only_norm_eps_and_rope_base_reach_every_part():
    config = DecoderOnlyConfig(
        **SMALL, norm="rms", positional="rope", norm_first=True, norm_eps=1e-3,
        rope_base=500000.0,
    )  # fmt: skip
    model = DecoderOnlyTransformer(config)
    eps = {m.eps for m in model.modules() if hasattr(m, "eps")}
    assert eps == {1e-3}
    assert model.rope.base == 500000.0
    assert all(layer.self_attn.rope is model.rope for layer in model.stack.layers)


def test_decoder_only_gelu_tanh_is_the_tanh_approximation():
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**SMALL, activation="gelu_tanh"))
    ffn = model.stack.layers[0].feed_forward
    x = torch.randn(2, 5, 16)
    expected = ffn.w_2(F.gelu(ffn.w_1(x), approximate="tanh"))
    torch.testing.assert_close(ffn(x), expected, rtol=0, atol=0)
    assert not torch.allclose(expected, ffn.w_2(F.gelu(ffn.w_1(x))), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"scale_embeddings": 1}, TypeError, "scale_embeddings"),
        ({"output_bias": "no"}, TypeError, "output_bias"),
        ({"rope_base": 0.0}, ValueError, "rope_base"),
        ({"norm_eps": -1e-5}, ValueError, "norm_eps"),
        ({"activation": "gelu_erf"}, ValueError, "activation"),
    ],
)
def test_decoder_only_config_rejects_bad_new_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        DecoderOnlyConfig(**{**SMALL, **kwargs})


def test_decoder_only_config_takes_only_the_vocabulary_by_position():
    # a second positional argument would silently become n_kv_heads
    assert DecoderOnlyConfig(37).vocab_size == 37
    with pytest.raises(TypeError, match="positional"):
        DecoderOnlyConfig(37, 2)
