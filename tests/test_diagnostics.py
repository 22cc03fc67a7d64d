import pytest
import torch
import torch.nn as nn

from transformer import Encoder, PositionwiseFeedForward, causal_mask
from transformer.training.diagnostics import GradientNorms, layer_gradient_norms


def test_layer_gradient_norms_match_backward_on_a_linear_stack():
    torch.manual_seed(0)
    layers = [nn.Linear(4, 4) for _ in range(3)]
    x = torch.randn(2, 4)
    norms = layer_gradient_norms(layers, x, lambda y: y.pow(2).sum())
    assert isinstance(norms, GradientNorms)
    assert norms.at_boundaries.shape == (4,) and norms.per_layer.shape == (3,)

    xs = [x.clone().requires_grad_(True)]
    for layer in layers:
        xs[-1].retain_grad()
        xs.append(layer(xs[-1]))
    xs[-1].retain_grad()
    xs[-1].pow(2).sum().backward()
    expected = torch.stack([v.grad.norm() for v in xs])
    torch.testing.assert_close(norms.at_boundaries, expected)
    for n, layer in enumerate(layers):
        by_hand = torch.cat([p.grad.flatten() for p in layer.parameters()]).norm()
        torch.testing.assert_close(norms.per_layer[n], by_hand)


def test_layer_gradient_norms_leave_grad_attributes_and_input_alone():
    layers = [nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3)]
    x = torch.randn(5, 3)
    norms = layer_gradient_norms(layers, x, lambda y: y.sum())
    assert all(p.grad is None for layer in layers for p in layer.parameters())
    assert not x.requires_grad
    assert norms.per_layer[1] == 0.0  # ReLU has no parameters
    assert (norms.at_boundaries > 0).all()


def test_layer_gradient_norms_total_gradient_includes_the_residual_path():
    # With x_{n+1} = x_n + f(x_n) and f = 0, the gradient passes unchanged.
    layers = [nn.Linear(3, 3) for _ in range(4)]
    for layer in layers:
        nn.init.zeros_(layer.weight)
        nn.init.zeros_(layer.bias)
    x = torch.randn(2, 3)
    norms = layer_gradient_norms(
        layers, x, lambda y: y.sum(), step=lambda f, v: v + f(v)
    )
    torch.testing.assert_close(norms.at_boundaries, torch.full((5,), 6**0.5))
    plain = layer_gradient_norms(layers, x, lambda y: y.sum())
    assert plain.at_boundaries[:-1].eq(0).all()  # a zero layer blocks the gradient


def test_layer_gradient_norms_pass_masks_through_step():
    # Under a causal mask, position 0 sees only itself: a loss on position 0
    # has the same gradients as the same loss on a one-token sequence.
    torch.manual_seed(0)
    encoder = Encoder(8, 2, 16, N=3)
    x = torch.randn(2, 5, 8)
    masked = layer_gradient_norms(
        encoder.layers,
        x,
        lambda y: y[:, 0].sum(),
        step=lambda layer, v: layer(v, causal_mask(5)),
    )
    alone = layer_gradient_norms(encoder.layers, x[:, :1], lambda y: y[:, 0].sum())
    torch.testing.assert_close(masked.at_boundaries, alone.at_boundaries)
    torch.testing.assert_close(masked.per_layer, alone.per_layer)
    ffn = [PositionwiseFeedForward(8, 16)]
    assert layer_gradient_norms(ffn, x, lambda y: y.mean()).per_layer[0] > 0


def test_layer_gradient_norms_reject_bad_arguments():
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        layer_gradient_norms([nn.Linear(2, 2)], [1.0, 2.0], lambda y: y.sum())
    with pytest.raises(ValueError, match="layers must hold at least one"):
        layer_gradient_norms([], torch.randn(2, 2), lambda y: y.sum())
    with pytest.raises(TypeError, match=r"layers\[1\] must be an nn.Module"):
        layer_gradient_norms(
            [nn.Linear(2, 2), torch.relu], torch.randn(2, 2), lambda y: y.sum()
        )
    with pytest.raises(
        TypeError, match=r"loss_fn must return a scalar tensor, got \(3, 2\)"
    ):
        layer_gradient_norms([nn.Linear(2, 2)], torch.randn(3, 2), lambda y: y)
