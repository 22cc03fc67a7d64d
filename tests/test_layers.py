import pytest
import torch

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import (
    DecoderLayer,
    EncoderLayer,
    causal_mask,
    padding_mask,
    record_attention,
)

D_MODEL, H, D_FF = 16, 4, 32
ATTENTION, FEED_FORWARD, NORM = (
    4 * (D_MODEL**2 + D_MODEL),
    2 * D_MODEL * D_FF + D_FF + D_MODEL,
    2 * D_MODEL,
)


def encoder_layer(**kwargs):
    torch.manual_seed(0)
    return EncoderLayer(D_MODEL, H, D_FF, **kwargs).eval()


def decoder_layer(**kwargs):
    torch.manual_seed(0)
    return DecoderLayer(D_MODEL, H, D_FF, **kwargs).eval()


def test_encoder_layer_parameter_count_matches_formula():
    layer = encoder_layer()
    assert (
        sum(p.numel() for p in layer.parameters())
        == ATTENTION + FEED_FORWARD + 2 * NORM
    )


def test_decoder_layer_parameter_count_matches_formula():
    layer = decoder_layer()
    assert (
        sum(p.numel() for p in layer.parameters())
        == 2 * ATTENTION + FEED_FORWARD + 3 * NORM
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_causal_outputs_ignore_future_tokens(norm_first):
    layer = encoder_layer(norm_first=norm_first)
    x = torch.randn(2, 6, D_MODEL)
    changed = x.clone()
    changed[:, 3:] = torch.randn(2, 3, D_MODEL)
    mask = causal_mask(6)
    torch.testing.assert_close(layer(x, mask)[:, :3], layer(changed, mask)[:, :3])
    assert not torch.allclose(layer(x, mask)[:, 3:], layer(changed, mask)[:, 3:])


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_padding_does_not_change_real_positions(norm_first):
    layer = encoder_layer(norm_first=norm_first)
    x = torch.randn(2, 6, D_MODEL)
    mask = padding_mask([6, 4])
    changed = x.clone()
    changed[1, 4:] = 50.0
    torch.testing.assert_close(layer(x, mask)[1, :4], layer(changed, mask)[1, :4])
    torch.testing.assert_close(layer(x, mask)[0], layer(changed, mask)[0])


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_causal_outputs_ignore_future_target_tokens(norm_first):
    layer = decoder_layer(norm_first=norm_first)
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)
    changed = x.clone()
    changed[:, 2:] = torch.randn(2, 3, D_MODEL)
    out, out_changed = (
        layer(x, memory, causal_mask(5)),
        layer(changed, memory, causal_mask(5)),
    )
    torch.testing.assert_close(out[:, :2], out_changed[:, :2])


def test_decoder_layer_padded_memory_does_not_change_outputs():
    layer = decoder_layer()
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)
    cross_mask = padding_mask([7, 3])
    changed = memory.clone()
    changed[1, 3:] = -20.0
    expected = layer(x, memory, causal_mask(5), cross_mask)
    with record_attention(layer):
        torch.testing.assert_close(
            layer(x, changed, causal_mask(5), cross_mask), expected
        )
    assert (layer.cross_attn.attn_weights[1, :, :, 3:] == 0).all()


def test_decoder_layer_keeps_self_and_cross_attention_weights():
    layer = decoder_layer()
    with record_attention(layer):
        layer(torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL))
    assert layer.self_attn.attn_weights.shape == (2, H, 5, 5)
    assert layer.cross_attn.attn_weights.shape == (2, H, 5, 7)


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_gradients_reach_every_parameter(norm_first):
    encoder, decoder = (
        encoder_layer(norm_first=norm_first),
        decoder_layer(norm_first=norm_first),
    )
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)
    assert_gradients_reach_every_parameter(encoder, encoder(x))
    assert_gradients_reach_every_parameter(decoder, decoder(x, memory, causal_mask(5)))


def test_layers_dropout_acts_only_in_training():
    encoder, decoder = encoder_layer(dropout=0.3), decoder_layer(dropout=0.3)
    x, memory = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)
    assert_dropout_only_in_training(encoder, lambda: encoder(x))
    assert_dropout_only_in_training(decoder, lambda: decoder(x, memory))


@pytest.mark.parametrize("kind", [EncoderLayer, DecoderLayer])
@pytest.mark.parametrize(
    ("args", "options", "error", "match"),
    [
        (
            (15, 4, 32),
            {},
            ValueError,
            "d_model must be divisible by h: got d_model=15, h=4",
        ),
        ((16, 4, 0), {}, ValueError, "d_ff must be a positive int"),
        ((16, 4, 32), {"activation": "swish"}, ValueError, "activation must be 'relu'"),
        ((16, 4, 32), {"norm_first": "yes"}, TypeError, "norm_first must be a bool"),
        ((16, 4, 32, 0.1), {}, TypeError, "takes 4 positional arguments"),
    ],
)
def test_layers_reject_bad_constructor_arguments(kind, args, options, error, match):
    with pytest.raises(error, match=match):
        kind(*args, **options)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (torch.randn(5, D_MODEL),),
            ValueError,
            r"x must have 3 dimensions \(B, L, d_model\), got shape \(5, 16\)",
        ),
        (
            (torch.randn(2, 5, 8),),
            ValueError,
            r"x must have shape \(B, L, d_model\) with last dimension 16",
        ),
        (
            (torch.randn(2, 5, D_MODEL), torch.ones(5, 5)),
            TypeError,
            "mask must be a boolean tensor",
        ),
        (
            (torch.randn(2, 5, D_MODEL), causal_mask(4)),
            ValueError,
            r"mask must broadcast to \(B, h, L, L\) = \(2, 4, 5, 5\), got shape "
            r"\(4, 4\)",
        ),
    ],
)
def test_encoder_layer_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        encoder_layer()(*args)


X, MEMORY = torch.randn(2, 5, D_MODEL), torch.randn(2, 7, D_MODEL)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (X, torch.randn(7, D_MODEL)),
            ValueError,
            r"memory must have 3 dimensions \(B, S, d_model\), got shape \(7, 16\)",
        ),
        (
            (X, torch.randn(2, 7, 12)),
            ValueError,
            r"memory must have shape \(B, S, d_model\) with last dimension 16, got "
            r"shape \(2, 7",
        ),
        (
            (X, torch.randn(3, 7, D_MODEL)),
            ValueError,
            r"memory must have shape \(B, S, d_model\) with B=2 as in x, got shape "
            r"\(3, 7, 16\)",
        ),
        ((X, torch.randn(2, 0, D_MODEL)), ValueError, r"memory must not be empty"),
        (
            (X, MEMORY, causal_mask(7)),
            ValueError,
            r"self_mask must broadcast to \(B, h, L, L\) = \(2, 4, 5, 5\), got "
            r"shape \(7, 7\)",
        ),
        (
            (X, MEMORY, None, padding_mask([5, 3])),
            ValueError,
            r"cross_mask must broadcast to \(B, h, L, S\) = \(2, 4, 5, 7\), got "
            r"shape \(2, 1, 1",
        ),
        (
            (X, MEMORY, None, torch.ones(2, 1, 1, 7)),
            TypeError,
            "cross_mask must be a boolean tensor",
        ),
    ],
)
def test_decoder_layer_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        decoder_layer()(*args)
