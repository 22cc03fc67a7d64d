import dataclasses

import pytest
import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    Transformer,
    TransformerConfig,
    count_parameters,
)


def test_transformer_config_defaults_are_the_paper_base_model():
    config = TransformerConfig.base(37000)
    assert (config.d_model, config.h, config.N, config.d_ff, config.dropout) == (
        512,
        8,
        6,
        2048,
        0.1,
    )
    assert (config.activation, config.norm_first, config.positional) == (
        "relu",
        False,
        "sinusoidal",
    )
    assert (
        config.share_embeddings
        and config.src_vocab_size == config.tgt_vocab_size == 37000
    )


def test_transformer_config_base_and_big_have_the_paper_sizes():
    # The paper reports 65M and 213M parameters; its exact vocabulary is not given.
    assert 60e6 < TransformerConfig.base(37000).num_parameters() < 66e6
    assert 205e6 < TransformerConfig.big(37000).num_parameters() < 215e6


def test_transformer_config_base_parameter_count_matches_built_model():
    config = TransformerConfig.base(37000)
    with torch.device("meta"):  # shapes only, no memory or time spent on 63M numbers
        model = Transformer(config)
    assert count_parameters(model) == config.num_parameters() == 63_119_496


SIZES = {
    "d_model": st.sampled_from([8, 12]),
    "h": st.sampled_from([1, 2, 4]),
    "N": st.integers(1, 2),
    "d_ff": st.integers(1, 20),
    "max_len": st.integers(1, 30),
    "norm_first": st.booleans(),
    "positional": st.sampled_from(["sinusoidal", "learned"]),
    "activation": st.sampled_from(["relu", "gelu"]),
}


@settings(max_examples=30, deadline=None)
@given(
    V=st.integers(1, 30),
    V_tgt=st.integers(1, 30),
    share=st.booleans(),
    sizes=st.fixed_dictionaries(SIZES),
)
def test_transformer_config_parameter_count_matches_built_model(V, V_tgt, share, sizes):
    config = TransformerConfig(
        V, V if share else V_tgt, share_embeddings=share, **sizes
    )
    assert count_parameters(Transformer(config)) == config.num_parameters()


@settings(max_examples=30, deadline=None)
@given(V=st.integers(1, 30), share=st.booleans(), sizes=st.fixed_dictionaries(SIZES))
def test_decoder_only_config_parameter_count_matches_built_model(V, share, sizes):
    config = DecoderOnlyConfig(vocab_size=V, share_embeddings=share, **sizes)
    assert count_parameters(DecoderOnlyTransformer(config)) == config.num_parameters()


def test_configs_are_frozen():
    config = DecoderOnlyConfig(vocab_size=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 8
    assert dataclasses.replace(config, d_model=8).d_model == 8


def test_count_parameters_counts_a_shared_matrix_once():
    shared = nn.Linear(3, 3)
    assert count_parameters(nn.Sequential(shared, shared)) == 12


def test_count_parameters_rejects_what_is_not_a_module():
    with pytest.raises(TypeError, match="model must be an nn.Module, got dict"):
        count_parameters({})


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"d_model": 30, "h": 4},
            ValueError,
            "d_model must be divisible by h: got d_model=30, h=4",
        ),
        ({"N": 0}, ValueError, "N must be a positive int"),
        ({"d_ff": -1}, ValueError, "d_ff must be a positive int"),
        ({"max_len": 0}, ValueError, "max_len must be a positive int"),
        ({"dropout": 1.5}, ValueError, "dropout must be in"),
        ({"activation": "tanh"}, ValueError, "activation must be 'relu' or 'gelu'"),
        (
            {"positional": "rotary"},
            ValueError,
            "positional must be 'sinusoidal' or 'learned'",
        ),
        ({"norm_first": "no"}, TypeError, "norm_first must be a bool"),
        ({"tgt_vocab_size": 0}, ValueError, "tgt_vocab_size must be a positive int"),
        ({"src_vocab_size": 3.0}, TypeError, "src_vocab_size must be a positive int"),
        (
            {"share_embeddings": True, "tgt_vocab_size": 11},
            ValueError,
            "share_embeddings needs one vocabulary",
        ),
    ],
)
def test_transformer_config_rejects_bad_fields(kwargs, error, match):
    fields = {"src_vocab_size": 10, "tgt_vocab_size": 10, **kwargs}
    with pytest.raises(error, match=match):
        TransformerConfig(**fields)


def test_decoder_only_config_rejects_a_bad_vocabulary_size():
    with pytest.raises(ValueError, match="vocab_size must be a positive int"):
        DecoderOnlyConfig(vocab_size=0)
