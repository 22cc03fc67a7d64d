"""Tests of transformer.training.modes."""

import pytest
import torch.nn as nn

from transformer.training.modes import evaluating


def model() -> nn.Module:
    return nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))


@pytest.mark.parametrize("training", [True, False])
def test_evaluating_turns_dropout_off_inside_and_restores_the_mode(training):
    m = model().train(training)
    with evaluating(m) as inside:
        assert inside is m
        assert not any(module.training for module in m.modules())
    assert all(module.training is training for module in m.modules())


def test_evaluating_restores_the_mode_when_the_block_raises():
    m = model().train()
    with pytest.raises(RuntimeError, match="interrupted"):
        with evaluating(m):
            assert not m.training
            raise RuntimeError("interrupted")
    assert m.training and m[1].training
