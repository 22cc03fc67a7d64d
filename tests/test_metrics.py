"""Tests of transformer.training.metrics."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer import Transformer, TransformerConfig
from transformer.data.batches import lm_batch, seq2seq_batch
from transformer.data.tasks import Example
from transformer.training.metrics import (
    evaluate,
    position_accuracy,
    sequence_loss,
    token_accuracy,
)


class Echo(nn.Module):
    """A 'language model' that predicts, at every position, the token it reads."""

    def __init__(self, V: int) -> None:
        super().__init__()
        self.V = V

    def forward(self, x, mask=None):
        return F.one_hot(x, self.V).float()  # (B, L, V)


def test_sequence_loss_ignores_positions_whose_target_is_pad():
    logits = torch.randn(1, 3, 6)
    targets = torch.tensor([[4, 2, 0]])
    expected = F.cross_entropy(logits[0, :2], targets[0, :2])
    assert sequence_loss(logits, targets).item() == pytest.approx(expected.item())
    logits[0, 2] = 100.0 * torch.randn(6)
    assert sequence_loss(logits, targets).item() == pytest.approx(expected.item())


def test_sequence_loss_label_smoothing_penalises_certainty():
    confident = torch.full((1, 1, 6), -20.0)
    confident[0, 0, 4] = 20.0
    targets = torch.tensor([[4]])
    assert sequence_loss(confident, targets).item() < 1e-6
    assert sequence_loss(confident, targets, label_smoothing=0.1).item() > 1.0


def test_token_accuracy_counts_only_real_positions():
    logits = F.one_hot(torch.tensor([[4, 3, 1, 5]]), 6).float()
    assert token_accuracy(logits, torch.tensor([[4, 2, 0, 5]])) == pytest.approx(2 / 3)


def test_position_accuracy_shows_where_a_model_is_right():
    # Echoing the input gets the middle of a reversal right and nothing else.
    examples = [Example((4, 5, 6), (6, 5, 4)), Example((7, 8, 7), (7, 8, 7))]
    batch = lm_batch(examples, layout="aligned")
    assert position_accuracy(Echo(9), batch).tolist() == [0.5, 1.0, 0.5]


def test_evaluate_measures_in_eval_mode_and_restores_the_mode():
    torch.manual_seed(0)
    model = Transformer(
        TransformerConfig(9, 9, d_model=16, h=2, N=1, d_ff=32, dropout=0.5)
    )
    batch = seq2seq_batch([Example((4, 5, 6), (6, 5, 4))])
    model.train()
    first, second = evaluate(model, batch), evaluate(model, batch)
    assert first == second  # no dropout while measuring
    assert model.training


def test_measures_reject_mismatched_shapes():
    with pytest.raises(
        ValueError, match=r"targets must have shape \(B, L\) = \(2, 3\)"
    ):
        sequence_loss(torch.randn(2, 3, 5), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"logits must have 3 dimensions \(B, L, V\)"):
        token_accuracy(torch.randn(3, 5), torch.zeros(3, dtype=torch.long))
