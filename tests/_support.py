"""Helpers shared by the test files of the model modules (not a test file itself)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}
"""Largest absolute difference allowed between us and PyTorch, per dtype."""


def assert_close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Assert equality within :data:`TOLERANCE` for the tensors' dtype."""
    torch.testing.assert_close(actual, expected, atol=TOLERANCE[expected.dtype], rtol=0)


def assert_gradients_reach_every_parameter(
    module: nn.Module, output: torch.Tensor
) -> None:
    """Backpropagate a random projection of ``output`` and check every parameter got a
    gradient."""
    (output * torch.randn_like(output)).sum().backward()
    for name, parameter in module.named_parameters():
        assert parameter.grad is not None, f"{name} got no gradient"
        assert parameter.grad.abs().sum() > 0, f"{name} got an all-zero gradient"


def assert_dropout_only_in_training(
    module: nn.Module, run: Callable[[], torch.Tensor]
) -> None:
    """Check that ``run()`` is deterministic in eval mode and random in training
    mode."""
    module.eval()
    assert torch.equal(run(), run())
    module.train()
    assert not torch.equal(run(), run())
    module.eval()
