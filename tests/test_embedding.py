import math

import pytest
import torch

from _support import assert_gradients_reach_every_parameter
from transformer import TokenEmbedding


def test_token_embedding_looks_up_rows_scaled_by_sqrt_d_model():
    embed = TokenEmbedding(10, 16)
    ids = torch.tensor([[1, 9, 1], [0, 3, 5]])
    out = embed(ids)
    assert out.shape == (2, 3, 16)
    torch.testing.assert_close(out, embed.weight[ids] * math.sqrt(16))
    torch.testing.assert_close(out[0, 0], out[0, 2])


def test_token_embedding_scaled_vectors_have_unit_variance_at_initialisation():
    torch.manual_seed(0)
    embed = TokenEmbedding(2000, 64)
    out = embed(torch.arange(2000)[None])
    assert abs(out.var().item() - 1.0) < 0.05


def test_token_embedding_gradients_reach_every_parameter():
    embed = TokenEmbedding(4, 8)
    assert_gradients_reach_every_parameter(embed, embed(torch.tensor([[0, 1, 2, 3]])))
    assert sum(p.numel() for p in embed.parameters()) == 4 * 8


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        (
            torch.tensor([[0, 10]]),
            ValueError,
            r"ids must hold token ids in \[0, V\) = \[0, 10\), got 10 "
            r"in a tensor of shape \(1, 2",
        ),
        (
            torch.tensor([[-1, 3]]),
            ValueError,
            r"ids must hold token ids in \[0, V\) = \[0, 10\), got -1",
        ),
        (
            torch.tensor([[0.0, 1.0]]),
            TypeError,
            r"ids must hold integer token ids \(torch.long\), got dtype torch.float32",
        ),
        (torch.tensor([[True]]), TypeError, r"ids must hold integer token ids"),
        (
            torch.tensor([1, 2]),
            ValueError,
            r"ids must have 2 dimensions \(B, L\), got shape \(2,\)",
        ),
        (
            torch.zeros(2, 0, dtype=torch.long),
            ValueError,
            r"ids must not be empty \(B, L\), got shape \(2, 0\)",
        ),
        ([[1, 2]], TypeError, r"ids must be a torch.Tensor"),
    ],
)
def test_token_embedding_rejects_bad_ids(ids, error, match):
    with pytest.raises(error, match=match):
        TokenEmbedding(10, 4)(ids)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((0, 4), ValueError, "V must be a positive int"),
        ((10, 2.0), TypeError, "d_model must be a positive int"),
    ],
)
def test_token_embedding_rejects_bad_sizes(args, error, match):
    with pytest.raises(error, match=match):
        TokenEmbedding(*args)
