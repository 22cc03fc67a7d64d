"""Our modules against PyTorch's, with copied weights, in eval mode.

PyTorch runs under ``torch.no_grad()`` here, which lets its encoder layers take
their fused "fast path": the comparison covers the code PyTorch users run in
inference, not only its reference path.
"""

import pytest
import torch
import torch.nn as nn

from _support import assert_close
from transformer import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    MultiHeadAttention,
    causal_mask,
    from_torch,
    padding_mask,
    to_torch,
    to_torch_mask,
)

D_MODEL, H, D_FF = 16, 4, 24
DTYPES = [torch.float32, torch.float64]
MASKS = ["none", "causal", "padding", "both"]


def masks(kind, B, L, S):
    """Return our mask and PyTorch's ``(attn_mask, key_padding_mask)``, same blocking.

    "causal" lets query ``i`` see keys ``0..i``; "padding" gives the sequences
    decreasing true lengths (every one at least 1, so no row is fully masked).
    """
    ours, attn_mask, key_padding_mask = None, None, None
    if kind in ("causal", "both"):
        ours = causal_mask(max(L, S))[:L, :S]  # (L, S)
        attn_mask = to_torch_mask(ours)
    if kind in ("padding", "both"):
        pad = padding_mask([max(1, S - 1 - 2 * b) for b in range(B)], S)  # (B, 1, 1, S)
        ours = pad if ours is None else ours & pad
        key_padding_mask = to_torch_mask(pad[:, 0, 0])  # (B, S)
    return ours, attn_mask, key_padding_mask


def inputs(dtype, B, L, S):
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(B, L, D_MODEL, dtype=dtype, generator=generator)
    memory = torch.randn(B, S, D_MODEL, dtype=dtype, generator=generator)
    return x, memory


def seeded(build):
    torch.manual_seed(0)
    return build()


def randomize_norms(module):
    """Give every layer norm a non-trivial gain and bias, so that copying is tested."""
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            if "norm" in name:
                parameter.normal_()
    return module


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("B", [1, 3])
@pytest.mark.parametrize("cross", [False, True])
def test_multihead_attention_matches_torch(dtype, mask_kind, B, cross):
    ours = seeded(lambda: MultiHeadAttention(D_MODEL, H)).to(dtype).eval()
    theirs = to_torch(ours)
    L, S = (5, 7) if cross else (6, 6)
    x, memory = inputs(dtype, B, L, S)
    kv = memory if cross else x
    mask, attn_mask, key_padding_mask = masks(mask_kind, B, L, S)
    with torch.no_grad():
        expected, weights = theirs(
            x,
            kv,
            kv,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=True,
            average_attn_weights=False,
        )
        fast = ours(x, kv, kv, mask)
        actual = ours(x, kv, kv, mask, need_weights=True)
    assert_close(actual, expected)
    assert_close(fast, expected)
    assert_close(ours.attn_weights, weights)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_from_torch_matches_torch(dtype, bias):
    theirs = seeded(
        lambda: nn.MultiheadAttention(D_MODEL, H, bias=bias, batch_first=True)
    )
    theirs = theirs.to(dtype).eval()
    ours = from_torch(theirs)
    x, memory = inputs(dtype, 2, 3, 5)
    mask, attn_mask, key_padding_mask = masks("both", 2, 3, 5)
    with torch.no_grad():
        expected = theirs(
            x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask
        )
        assert_close(ours(x, memory, memory, mask), expected[0])


ENCODERS = {
    "layer": lambda act, norm_first: EncoderLayer(
        D_MODEL, H, D_FF, dropout=0.1, activation=act, norm_first=norm_first
    ),
    "stack": lambda act, norm_first: Encoder(
        D_MODEL,
        H,
        D_FF,
        2,
        dropout=0.1,
        activation=act,
        norm_first=norm_first,
        final_norm=False,
    ),
    "stack+norm": lambda act, norm_first: Encoder(
        D_MODEL,
        H,
        D_FF,
        2,
        dropout=0.1,
        activation=act,
        norm_first=norm_first,
        final_norm=True,
    ),
}
DECODERS = {
    "layer": lambda act, norm_first: DecoderLayer(
        D_MODEL, H, D_FF, dropout=0.1, activation=act, norm_first=norm_first
    ),
    "stack": lambda act, norm_first: Decoder(
        D_MODEL,
        H,
        D_FF,
        2,
        dropout=0.1,
        activation=act,
        norm_first=norm_first,
        final_norm=False,
    ),
    "stack+norm": lambda act, norm_first: Decoder(
        D_MODEL,
        H,
        D_FF,
        2,
        dropout=0.1,
        activation=act,
        norm_first=norm_first,
        final_norm=True,
    ),
}


@pytest.mark.parametrize("kind", ENCODERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("B", [1, 3])
def test_encoder_layer_and_stack_match_torch(
    kind, dtype, activation, norm_first, mask_kind, B
):
    ours = (
        randomize_norms(seeded(lambda: ENCODERS[kind](activation, norm_first)))
        .to(dtype)
        .eval()
    )
    theirs = to_torch(ours)
    x, _ = inputs(dtype, B, 6, 6)
    mask, attn_mask, key_padding_mask = masks(mask_kind, B, 6, 6)
    with torch.no_grad():
        assert_close(ours(x, mask), theirs(x, attn_mask, key_padding_mask))


@pytest.mark.parametrize("kind", DECODERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("B", [1, 3])
def test_decoder_layer_and_stack_match_torch(
    kind, dtype, activation, norm_first, mask_kind, B
):
    ours = (
        randomize_norms(seeded(lambda: DECODERS[kind](activation, norm_first)))
        .to(dtype)
        .eval()
    )
    theirs = to_torch(ours)
    x, memory = inputs(dtype, B, 5, 7)
    self_mask, tgt_mask, tgt_padding = masks(mask_kind, B, 5, 5)
    cross_kind = "padding" if mask_kind in ("padding", "both") else "none"
    cross_mask, _, memory_padding = masks(cross_kind, B, 5, 7)
    with torch.no_grad():
        expected = theirs(
            x,
            memory,
            tgt_mask=tgt_mask,
            tgt_key_padding_mask=tgt_padding,
            memory_key_padding_mask=memory_padding,
        )
        assert_close(ours(x, memory, self_mask, cross_mask), expected)


def torch_encoder(dtype, activation, norm_first, final_norm):
    layer = nn.TransformerEncoderLayer(
        D_MODEL,
        H,
        D_FF,
        0.1,
        activation,
        batch_first=True,
        norm_first=norm_first,
        dtype=dtype,
    )
    norm = nn.LayerNorm(D_MODEL, dtype=dtype) if final_norm else None
    return nn.TransformerEncoder(layer, 2, norm=norm, enable_nested_tensor=False)


def torch_decoder(dtype, activation, norm_first, final_norm):
    layer = nn.TransformerDecoderLayer(
        D_MODEL,
        H,
        D_FF,
        0.1,
        activation,
        batch_first=True,
        norm_first=norm_first,
        dtype=dtype,
    )
    norm = nn.LayerNorm(D_MODEL, dtype=dtype) if final_norm else None
    return nn.TransformerDecoder(layer, 2, norm=norm)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("final_norm", [False, True])
def test_from_torch_stacks_and_their_layers_match_torch(
    dtype, activation, norm_first, final_norm
):
    encoder = randomize_norms(
        seeded(lambda: torch_encoder(dtype, activation, norm_first, final_norm))
    )
    decoder = randomize_norms(
        seeded(lambda: torch_decoder(dtype, activation, norm_first, final_norm))
    )
    encoder, decoder = encoder.eval(), decoder.eval()
    x, memory = inputs(dtype, 2, 5, 7)
    self_mask, tgt_mask, tgt_padding = masks("both", 2, 5, 5)
    cross_mask, _, memory_padding = masks("padding", 2, 5, 7)
    src_mask, _, src_padding = masks("padding", 2, 7, 7)
    with torch.no_grad():
        expected = encoder(memory, src_key_padding_mask=src_padding)
        assert_close(from_torch(encoder)(memory, src_mask), expected)
        expected = encoder.layers[0](memory, src_key_padding_mask=src_padding)
        assert_close(from_torch(encoder.layers[0])(memory, src_mask), expected)
        expected = decoder(
            x,
            memory,
            tgt_mask=tgt_mask,
            tgt_key_padding_mask=tgt_padding,
            memory_key_padding_mask=memory_padding,
        )
        assert_close(from_torch(decoder)(x, memory, self_mask, cross_mask), expected)
        expected = decoder.layers[1](x, memory, tgt_mask=tgt_mask)
        assert_close(from_torch(decoder.layers[1])(x, memory, causal_mask(5)), expected)


@pytest.mark.parametrize(
    "build",
    [
        lambda: MultiHeadAttention(D_MODEL, H, dropout=0.2),
        lambda: EncoderLayer(
            D_MODEL, H, D_FF, dropout=0.2, activation="gelu", norm_first=True
        ),
        lambda: Decoder(
            D_MODEL,
            H,
            D_FF,
            3,
            dropout=0.2,
            activation="relu",
            norm_first=True,
            eps=1e-6,
        ),
    ],
)
def test_to_torch_then_from_torch_gives_the_same_module_back(build):
    ours = seeded(build).double()
    back = from_torch(to_torch(ours))
    assert type(back) is type(ours)
    assert back.training and repr(back) == repr(ours)
    assert all(p.dtype == torch.float64 for p in back.parameters())
    for (name, a), (_, b) in zip(
        ours.state_dict().items(), back.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_to_torch_keeps_the_sizes_dropout_and_mode():
    theirs = to_torch(
        seeded(
            lambda: EncoderLayer(
                D_MODEL,
                H,
                D_FF,
                dropout=0.3,
                activation="gelu",
                norm_first=True,
                eps=1e-6,
            )
        ).eval()
    )
    assert isinstance(theirs, nn.TransformerEncoderLayer)
    assert theirs.self_attn.batch_first and theirs.norm_first and not theirs.training
    assert (
        theirs.dropout.p == theirs.self_attn.dropout == 0.3 and theirs.norm1.eps == 1e-6
    )


def test_to_torch_mask_flips_polarity_and_is_its_own_inverse():
    mask = causal_mask(4)
    flipped = to_torch_mask(mask)
    assert torch.equal(flipped, torch.ones(4, 4, dtype=torch.bool).triu(1))
    assert torch.equal(to_torch_mask(flipped), mask)


@pytest.mark.parametrize("mask", [torch.ones(3, 3), [[True]]])
def test_to_torch_mask_rejects_what_is_not_a_boolean_tensor(mask):
    with pytest.raises(TypeError, match="mask must be a boolean torch.Tensor"):
        to_torch_mask(mask)


@pytest.mark.parametrize(
    ("module", "error", "match"),
    [
        (nn.Linear(2, 2), TypeError, "module must be an nn.MultiheadAttention"),
        (
            nn.MultiheadAttention(8, 2, kdim=4, vdim=4),
            ValueError,
            "kdim == vdim == embed_dim",
        ),
        (
            nn.MultiheadAttention(8, 2, add_bias_kv=True),
            ValueError,
            "add_bias_kv or add_zero_attn",
        ),
        (
            nn.TransformerEncoderLayer(8, 2, 16, activation=torch.tanh),
            ValueError,
            "module.activation must be relu or exact gelu",
        ),
        (
            nn.TransformerEncoderLayer(8, 2, 16, bias=False),
            ValueError,
            "module must have biases",
        ),
        (
            nn.TransformerEncoder(
                nn.TransformerEncoderLayer(8, 2, 16),
                2,
                norm=nn.LayerNorm(8, eps=0.1),
                enable_nested_tensor=False,
            ),
            ValueError,
            "module.norm must be None or an nn.LayerNorm",
        ),
    ],
)
def test_from_torch_rejects_what_it_cannot_convert(module, error, match):
    with pytest.raises(error, match=match):
        from_torch(module)


def test_to_torch_rejects_a_module_without_a_counterpart():
    with pytest.raises(
        TypeError, match="module must be a MultiHeadAttention, EncoderLayer"
    ):
        to_torch(nn.Linear(2, 2))
