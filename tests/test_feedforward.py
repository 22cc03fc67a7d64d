import pytest
import torch
import torch.nn.functional as F

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import PositionwiseFeedForward


@pytest.mark.parametrize(
    ("activation", "function"), [("relu", F.relu), ("gelu", F.gelu)]
)
def test_positionwise_feed_forward_computes_two_linear_maps_around_the_activation(
    activation, function
):
    ffn = PositionwiseFeedForward(8, 32, activation=activation)
    x = torch.randn(2, 5, 8)
    w1, b1, w2, b2 = ffn.w_1.weight, ffn.w_1.bias, ffn.w_2.weight, ffn.w_2.bias
    torch.testing.assert_close(ffn(x), function(x @ w1.T + b1) @ w2.T + b2)


def test_positionwise_feed_forward_treats_positions_independently():
    ffn = PositionwiseFeedForward(8, 16)
    x = torch.randn(2, 5, 8)
    order = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(ffn(x[:, order]), ffn(x)[:, order])


def test_positionwise_feed_forward_parameter_count_matches_formula():
    d_model, d_ff = 12, 40
    ffn = PositionwiseFeedForward(d_model, d_ff)
    assert (
        sum(p.numel() for p in ffn.parameters()) == 2 * d_model * d_ff + d_ff + d_model
    )


def test_positionwise_feed_forward_gradients_reach_every_parameter():
    ffn = PositionwiseFeedForward(8, 16, activation="gelu")
    assert_gradients_reach_every_parameter(ffn, ffn(torch.randn(2, 5, 8)))


def test_positionwise_feed_forward_takes_its_options_by_keyword_only():
    with pytest.raises(TypeError, match="positional argument"):
        PositionwiseFeedForward(8, 16, 0.1)
    ffn = PositionwiseFeedForward(8, 16, dropout=0.25, activation="gelu")
    assert ffn.dropout.p == 0.25 and isinstance(ffn.activation, torch.nn.GELU)


def test_positionwise_feed_forward_dropout_acts_only_in_training():
    ffn = PositionwiseFeedForward(8, 64, dropout=0.5)
    x = torch.randn(2, 5, 8)
    assert_dropout_only_in_training(ffn, lambda: ffn(x))


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((8, 0), {}, ValueError, "d_ff must be a positive int"),
        ((-8, 16), {}, ValueError, "d_model must be a positive int"),
        (
            (8, 16),
            {"dropout": 0.1, "activation": "tanh"},
            ValueError,
            r"activation must be 'relu' or 'gelu' or 'gelu_tanh', got 'tanh'",
        ),
        (
            (8, 16),
            {"dropout": 0.1, "activation": torch.relu},
            TypeError,
            r"activation must be 'relu' or 'gelu'",
        ),
        ((8, 16), {"dropout": -0.1}, ValueError, "dropout must be in"),
    ],
)
def test_positionwise_feed_forward_rejects_bad_constructor_arguments(
    args, kwargs, error, match
):
    with pytest.raises(error, match=match):
        PositionwiseFeedForward(*args, **kwargs)


@pytest.mark.parametrize(
    ("x", "error", "match"),
    [
        (
            torch.randn(2, 5, 7),
            ValueError,
            r"x must have shape \(B, L, d_model\) with last dimension 8, "
            r"got shape \(2, 5, 7\)",
        ),
        (torch.randn(2, 3, 5, 8), ValueError, r"x must have 3 dimensions"),
        (torch.randn(0, 5, 8), ValueError, r"x must not be empty"),
    ],
)
def test_positionwise_feed_forward_rejects_bad_inputs(x, error, match):
    with pytest.raises(error, match=match):
        PositionwiseFeedForward(8, 16)(x)
