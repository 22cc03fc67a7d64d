import pytest
import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import (
    assert_close,
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import AddNorm, LayerNorm


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    d_model=st.integers(1, 9),
    eps=st.sampled_from([1e-5, 1e-6, 0.1]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_layer_norm_equals_torch_layer_norm(shape, d_model, eps, dtype):
    ours, theirs = (
        LayerNorm(d_model, eps).to(dtype),
        nn.LayerNorm(d_model, eps, dtype=dtype),
    )
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
        ours.weight.copy_(theirs.weight)
        ours.bias.copy_(theirs.bias)
    x = torch.randn(*shape, d_model, dtype=dtype) * 3 + 1
    assert_close(ours(x), theirs(x))


def test_layer_norm_uses_the_biased_variance_per_position():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 4.0]])
    out = LayerNorm(4, eps=0.0 + 1e-12)(x)
    assert torch.allclose(out.mean(-1), torch.zeros(2), atol=1e-6)
    assert torch.allclose(out.pow(2).mean(-1), torch.ones(2), atol=1e-5)


def test_layer_norm_gain_and_bias_are_vectors_and_get_gradients():
    norm = LayerNorm(6)
    assert norm.weight.shape == norm.bias.shape == (6,)
    assert torch.equal(norm.weight, torch.ones(6)) and torch.equal(
        norm.bias, torch.zeros(6)
    )
    assert_gradients_reach_every_parameter(norm, norm(torch.randn(3, 6)))


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((0,), ValueError, "d_model must be a positive int"),
        ((4, 0.0), ValueError, "eps must be a positive float"),
        ((4, "1e-5"), TypeError, "eps must be a positive float"),
    ],
)
def test_layer_norm_rejects_bad_constructor_arguments(args, error, match):
    with pytest.raises(error, match=match):
        LayerNorm(*args)


@pytest.mark.parametrize(
    ("x", "error", "match"),
    [
        (
            torch.randn(3, 5),
            ValueError,
            r"x must have shape \(\.\.\., d_model\) with last dimension 4, got "
            r"shape \(3, 5\)",
        ),
        (torch.randn(0, 4), ValueError, r"x must not be empty"),
        ([1.0, 2.0], TypeError, r"x must be a torch.Tensor"),
    ],
)
def test_layer_norm_rejects_bad_inputs(x, error, match):
    with pytest.raises(error, match=match):
        LayerNorm(4)(x)


def test_add_norm_post_norm_is_norm_of_x_plus_sublayer():
    block, sublayer = AddNorm(6), nn.Linear(6, 6)
    x = torch.randn(2, 3, 6)
    torch.testing.assert_close(block(x, sublayer), block.norm(x + sublayer(x)))


def test_add_norm_pre_norm_is_x_plus_sublayer_of_norm():
    block, sublayer = AddNorm(6, norm_first=True), nn.Linear(6, 6)
    x = torch.randn(2, 3, 6)
    torch.testing.assert_close(block(x, sublayer), x + sublayer(block.norm(x)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_add_norm_dropout_acts_only_in_training(norm_first):
    block, sublayer = AddNorm(6, dropout=0.5, norm_first=norm_first), nn.Linear(6, 6)
    x = torch.randn(2, 3, 6)
    assert_dropout_only_in_training(block, lambda: block(x, sublayer))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"norm_first": 1}, TypeError, "norm_first must be a bool"),
        ({"dropout": 2.0}, ValueError, "dropout must be in"),
        ({"eps": -1.0}, ValueError, "eps must be a positive float"),
    ],
)
def test_add_norm_rejects_bad_constructor_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        AddNorm(6, **kwargs)


def test_add_norm_rejects_a_sequence_of_the_wrong_width():
    with pytest.raises(
        ValueError, match=r"x must have shape \(B, L, d_model\) with last dimension 6"
    ):
        AddNorm(6)(torch.randn(2, 3, 5), nn.Identity())
