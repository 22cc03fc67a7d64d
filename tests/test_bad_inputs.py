"""Inputs that used to fail inside PyTorch, or silently: each gets a clear error.

Dtypes that do not match the weights, token ids of 8 or 16 bits, a mask on
another device (simulated with PyTorch's ``meta`` device, which holds shapes
but no data), loss targets of the wrong shape or dtype, a learning rate that
is not finite, and a ``(B, S)`` padding mask where ``B == S`` would otherwise
broadcast onto the query axis.
"""

from __future__ import annotations

import math

import pytest
import torch

import transformer
from transformer import (
    AddNorm,
    Decoder,
    DecoderLayer,
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    Encoder,
    EncoderLayer,
    LayerNorm,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    PositionwiseFeedForward,
    SinusoidalPositionalEncoding,
    TokenEmbedding,
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)
from transformer.data.tasks import make_task
from transformer.training.metrics import sequence_loss, token_accuracy
from transformer.training.train import train

D = 8
CONFIG = TransformerConfig(
    src_vocab_size=11, tgt_vocab_size=13, d_model=D, h=2, d_ff=16, N=1, max_len=12
)


def sequence_modules():
    """Every module that takes a ``(B, L, d_model)`` float sequence first."""
    return {
        "MultiHeadAttention": (MultiHeadAttention(D, 2), lambda m, x: m(x, x, x)),
        "PositionwiseFeedForward": (PositionwiseFeedForward(D, 16), lambda m, x: m(x)),
        "LayerNorm": (LayerNorm(D), lambda m, x: m(x)),
        "AddNorm": (AddNorm(D), lambda m, x: m(x, lambda y: y)),
        "SinusoidalPositionalEncoding": (
            SinusoidalPositionalEncoding(D, 12),
            lambda m, x: m(x),
        ),
        "LearnedPositionalEmbedding": (
            LearnedPositionalEmbedding(D, 12),
            lambda m, x: m(x),
        ),
        "EncoderLayer": (EncoderLayer(D, 2, 16), lambda m, x: m(x)),
        "DecoderLayer": (DecoderLayer(D, 2, 16), lambda m, x: m(x, x.float())),
        "Encoder": (Encoder(D, 2, 16, 1), lambda m, x: m(x)),
        "Decoder": (Decoder(D, 2, 16, 1), lambda m, x: m(x, x.float())),
    }


@pytest.mark.parametrize("name", sorted(sequence_modules()))
@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_a_float_input_of_another_dtype_than_the_weights_is_rejected(name, dtype):
    module, call = sequence_modules()[name]
    x = torch.randn(2, 3, D, dtype=dtype)
    with pytest.raises(
        TypeError, match=rf"must have the dtype of .*torch.float32.*{dtype}"
    ):
        call(module, x)


@pytest.mark.parametrize("name", sorted(sequence_modules()))
def test_an_integer_input_is_rejected(name):
    module, call = sequence_modules()[name]
    x = torch.ones(2, 3, D, dtype=torch.long)
    with pytest.raises(TypeError, match=r"must be a floating-point tensor of shape"):
        call(module, x)


def test_a_module_converted_to_float64_takes_float64():
    mha = MultiHeadAttention(D, 2).double()
    x = torch.randn(2, 3, D, dtype=torch.float64)
    assert mha(x, x, x).dtype == torch.float64


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16])
def test_token_ids_of_8_or_16_bits_are_rejected(dtype):
    ids = torch.ones(2, 3, dtype=dtype)
    with pytest.raises(
        TypeError,
        match=rf"ids must hold integer token ids \(torch.long\), got dtype {dtype}",
    ):
        TokenEmbedding(5, D)(ids)
    with pytest.raises(TypeError, match=rf"src must hold integer token ids .* {dtype}"):
        Transformer(CONFIG)(ids, ids.long())
    lm = DecoderOnlyTransformer(
        DecoderOnlyConfig(vocab_size=5, d_model=D, h=2, d_ff=16, N=1, max_len=8)
    )
    with pytest.raises(TypeError, match=rf"x must hold integer token ids .* {dtype}"):
        lm(ids)


def test_int32_token_ids_work():
    ids = torch.ones(2, 3, dtype=torch.int32)
    assert Transformer(CONFIG)(ids, ids).shape == (2, 3, 13)


META = torch.device("meta")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda x, m: MultiHeadAttention(D, 2)(x, x, x, m), "mask"),
        (lambda x, m: EncoderLayer(D, 2, 16)(x, m), "mask"),
        (lambda x, m: Encoder(D, 2, 16, 1)(x, m), "mask"),
        (lambda x, m: DecoderLayer(D, 2, 16)(x, x, m), "self_mask"),
        (lambda x, m: Decoder(D, 2, 16, 1)(x, x, None, m), "cross_mask"),
        (lambda x, m: scaled_dot_product_attention(x, x, x, m[0, 0]), "mask"),
    ],
)
def test_a_mask_on_another_device_is_rejected(call, name):
    x = torch.randn(1, 3, D)
    mask = torch.ones(1, 1, 3, 3, dtype=torch.bool, device=META)
    with pytest.raises(
        ValueError, match=rf"{name} must be on the device of .*cpu.*got meta"
    ):
        call(x, mask)


def test_a_model_mask_on_another_device_is_rejected():
    src, tgt = torch.randint(0, 11, (2, 5)), torch.randint(0, 13, (2, 4))
    meta_mask = torch.ones(2, 1, 1, 5, dtype=torch.bool, device=META)
    with pytest.raises(
        ValueError, match=r"src_mask must be on the device of .*cpu.*got meta"
    ):
        Transformer(CONFIG)(src, tgt, meta_mask)
    with pytest.raises(
        ValueError, match=r"tgt_mask must be on the device of .*cpu.*got meta"
    ):
        Transformer(CONFIG)(src, tgt, None, causal_mask(4, device=META))


def test_ids_on_another_device_than_the_model_are_rejected():
    model = Transformer(CONFIG)
    ids = torch.ones(2, 3, dtype=torch.long, device=META)
    with pytest.raises(
        ValueError,
        match=r"src must be on the device of the model's weights, cpu, got meta",
    ):
        model(ids, ids)


@pytest.mark.parametrize("loss", [sequence_loss, token_accuracy])
@pytest.mark.parametrize(
    ("targets", "error", "match"),
    [
        (
            torch.zeros(2, 4),
            TypeError,
            r"targets must hold token ids \(torch.long\), got dtype torch.float32",
        ),
        (
            torch.zeros(2, 4, dtype=torch.int32),
            TypeError,
            r"targets must hold token ids \(torch.long\), got dtype torch.int32",
        ),
        (
            torch.zeros(2, 5, dtype=torch.long),
            ValueError,
            r"targets must have shape \(B, L\) = \(2, 4\)",
        ),
        (
            torch.zeros(2, 4, 7, dtype=torch.long),
            ValueError,
            r"targets must have 2 dimensions \(B, L\)",
        ),
        (
            torch.full((2, 4), 7),
            ValueError,
            r"targets must hold token ids in \[0, V\) = \[0, 7\), got 7",
        ),
    ],
)
def test_loss_targets_of_the_wrong_shape_or_dtype_are_rejected(
    loss, targets, error, match
):
    with pytest.raises(error, match=match):
        loss(torch.randn(2, 4, 7), targets)


@pytest.mark.parametrize("loss", [sequence_loss, token_accuracy])
def test_integer_logits_are_rejected(loss):
    with pytest.raises(TypeError, match=r"logits must be a floating-point tensor"):
        loss(
            torch.zeros(2, 4, 7, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long)
        )


@pytest.mark.parametrize("lr", [math.nan, math.inf, -math.inf])
def test_a_learning_rate_that_is_not_finite_is_rejected(lr):
    data = make_task("copy", n_train=8, n_test=4, seed=0)
    V = len(data.tokenizer)
    model = Transformer(
        TransformerConfig(
            src_vocab_size=V, tgt_vocab_size=V, d_model=D, h=2, d_ff=16, N=1
        )
    )
    with pytest.raises(
        ValueError, match=r"lr must be a positive float, and finite, got"
    ):
        train(model, data, steps=1, lr=lr)


def test_a_2d_padding_mask_is_never_broadcast_onto_the_query_axis():
    # B == S == L: a (B, S) mask would broadcast to (1, 1, B, S), rows as queries.
    src, tgt = torch.randint(0, 11, (4, 4)), torch.randint(0, 13, (4, 4))
    pad_2d = padding_mask([4, 2, 3, 1])[:, 0, 0]  # (B, S)
    model = Transformer(CONFIG)
    with pytest.raises(
        ValueError,
        match=r"src_mask must be 4-D and broadcast to .*mask\[:, None, None, :\]",
    ):
        model(src, tgt, pad_2d)
    with pytest.raises(
        ValueError,
        match=r"src_mask must be 4-D and broadcast to .*mask\[:, None, None, :\]",
    ):
        model.encode(src, pad_2d)
    x = torch.randn(4, 4, D)
    with pytest.raises(
        ValueError,
        match=r"cross_mask must be 4-D and broadcast to .*mask\[:, None, None, :\]",
    ):
        DecoderLayer(D, 2, 16)(x, x, None, pad_2d)
    # The 4-D form is the one that works, and it is what padding_mask returns.
    assert model(src, tgt, pad_2d[:, None, None, :]).shape == (4, 4, 13)


def test_a_3d_mask_needs_its_head_axis():
    # (B, L, S) with B == h would broadcast the batch onto the heads.
    x = torch.randn(2, 3, D)
    mask = torch.ones(2, 3, 3, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"mask must broadcast to .*mask\[:, None\]"):
        MultiHeadAttention(D, 2)(x, x, x, mask)
    assert MultiHeadAttention(D, 2)(x, x, x, mask[:, None]).shape == (2, 3, D)


def test_a_2d_causal_mask_still_works_everywhere():
    src, tgt = torch.randint(0, 11, (2, 5)), torch.randint(0, 13, (2, 4))
    assert Transformer(CONFIG)(src, tgt, None, causal_mask(4)).shape == (2, 4, 13)
    x = torch.randn(2, 4, D)
    assert MultiHeadAttention(D, 2)(x, x, x, causal_mask(4)).shape == (2, 4, D)
    assert transformer.EncoderLayer(D, 2, 16)(x, causal_mask(4)).shape == (2, 4, D)


def test_an_encoder_mask_of_the_wrong_length_names_the_self_attention_shape():
    # An encoder attends over its own positions, so its mask is (B, h, L, L).
    x = torch.randn(2, 4, D)
    mask = torch.ones(2, 1, 4, 5, dtype=torch.bool)
    for module in (EncoderLayer(D, 2, 16), Encoder(D, 2, 16, 1)):
        with pytest.raises(ValueError, match=r"mask .*\(B, h, L, L\)") as error:
            module(x, mask)
        assert "(2, 2, 4, 4)" in str(error.value) and "(2, 1, 4, 5)" in str(error.value)
