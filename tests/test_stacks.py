import pytest
import torch
import torch.nn as nn

from _support import assert_gradients_reach_every_parameter
from transformer import Decoder, Encoder, LayerNorm, causal_mask, padding_mask

D_MODEL, H, D_FF = 8, 2, 16


@pytest.mark.parametrize("kind", [Encoder, Decoder])
@pytest.mark.parametrize(
    ("norm_first", "final_norm", "has_norm"),
    [
        (False, None, False),
        (True, None, True),
        (False, True, True),
        (True, False, False),
    ],
)
def test_stacks_final_norm_follows_norm_first_unless_given(
    kind, norm_first, final_norm, has_norm
):
    stack = kind(D_MODEL, H, D_FF, 3, norm_first=norm_first, final_norm=final_norm)
    assert len(stack.layers) == 3
    expected = LayerNorm if has_norm else nn.Identity
    assert isinstance(stack.norm, expected)


@pytest.mark.parametrize("N", [1, 3])
def test_stacks_parameter_counts_match_formula(N):
    attention, norm = 4 * (D_MODEL**2 + D_MODEL), 2 * D_MODEL
    feed_forward = 2 * D_MODEL * D_FF + D_FF + D_MODEL
    encoder = Encoder(D_MODEL, H, D_FF, N, norm_first=True)
    decoder = Decoder(D_MODEL, H, D_FF, N)
    assert (
        sum(p.numel() for p in encoder.parameters())
        == N * (attention + feed_forward + 2 * norm) + norm
    )
    assert sum(p.numel() for p in decoder.parameters()) == N * (
        2 * attention + feed_forward + 3 * norm
    )


def test_stacks_layers_are_independent_copies():
    encoder = Encoder(D_MODEL, H, D_FF, 2)
    first, second = encoder.layers
    assert (
        first.self_attn.w_q.weight.data_ptr() != second.self_attn.w_q.weight.data_ptr()
    )
    assert not torch.equal(first.self_attn.w_q.weight, second.self_attn.w_q.weight)


def test_encoder_applies_its_layers_in_order_then_the_norm():
    encoder = Encoder(D_MODEL, H, D_FF, 2, norm_first=True).eval()
    x, mask = torch.randn(2, 5, D_MODEL), padding_mask([5, 2])
    expected = encoder.norm(encoder.layers[1](encoder.layers[0](x, mask), mask))
    torch.testing.assert_close(encoder(x, mask), expected)


def test_decoder_causal_outputs_ignore_future_target_tokens():
    decoder = Decoder(D_MODEL, H, D_FF, 2).eval()
    x, memory = torch.randn(1, 6, D_MODEL), torch.randn(1, 4, D_MODEL)
    changed = x.clone()
    changed[:, 4:] = 3.0
    out, out_changed = (
        decoder(x, memory, causal_mask(6)),
        decoder(changed, memory, causal_mask(6)),
    )
    torch.testing.assert_close(out[:, :4], out_changed[:, :4])


@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_gradients_reach_every_parameter(norm_first):
    encoder = Encoder(D_MODEL, H, D_FF, 2, norm_first=norm_first)
    decoder = Decoder(D_MODEL, H, D_FF, 2, norm_first=norm_first)
    memory = encoder(torch.randn(2, 5, D_MODEL))
    assert_gradients_reach_every_parameter(encoder, memory)
    assert_gradients_reach_every_parameter(
        decoder, decoder(torch.randn(2, 3, D_MODEL), memory.detach())
    )


@pytest.mark.parametrize("kind", [Encoder, Decoder])
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"N": 0}, ValueError, "N must be a positive int"),
        ({"N": 2.0}, TypeError, "N must be a positive int"),
        ({"N": 2, "final_norm": "yes"}, TypeError, "final_norm must be a bool or None"),
        ({"N": 2, "h": 3}, ValueError, "d_model must be divisible by h"),
    ],
)
def test_stacks_reject_bad_constructor_arguments(kind, kwargs, error, match):
    arguments = {"d_model": D_MODEL, "h": H, "d_ff": D_FF, **kwargs}
    with pytest.raises(error, match=match):
        kind(**arguments)


def test_stacks_reject_bad_inputs_naming_the_argument():
    encoder, decoder = Encoder(D_MODEL, H, D_FF, 2), Decoder(D_MODEL, H, D_FF, 2)
    with pytest.raises(
        ValueError, match=r"x must have shape \(B, L, d_model\) with last dimension 8"
    ):
        encoder(torch.randn(2, 5, 4))
    with pytest.raises(
        ValueError, match=r"memory must have shape \(B, S, d_model\) with B=2 as in x"
    ):
        decoder(torch.randn(2, 5, D_MODEL), torch.randn(1, 3, D_MODEL))
    with pytest.raises(TypeError, match="self_mask must be a boolean tensor"):
        decoder(
            torch.randn(2, 5, D_MODEL), torch.randn(2, 3, D_MODEL), torch.ones(5, 5)
        )
