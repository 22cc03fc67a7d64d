import math

import pytest
import torch

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

KINDS = [SinusoidalPositionalEncoding, LearnedPositionalEmbedding]


def test_sinusoidal_positional_encoding_follows_the_paper_formula():
    d_model, pe = 8, SinusoidalPositionalEncoding(8, 50).pe
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-7)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-7)


def test_sinusoidal_positional_encoding_adds_the_table_without_changing_x():
    module = SinusoidalPositionalEncoding(6, 10)
    x = torch.randn(2, 4, 6)
    before = x.clone()
    out = module(x)
    torch.testing.assert_close(out, before + module.pe[:4])
    assert torch.equal(x, before)


def test_sinusoidal_positional_encoding_is_a_buffer_that_moves_with_to():
    module = SinusoidalPositionalEncoding(6, 10)
    assert list(module.parameters()) == []
    assert [name for name, _ in module.named_buffers()] == ["pe"]
    module = module.to(torch.float64)
    assert module.pe.dtype == torch.float64
    assert module(torch.randn(1, 3, 6, dtype=torch.float64)).dtype == torch.float64


def test_learned_positional_embedding_adds_its_rows_and_learns_them():
    module = LearnedPositionalEmbedding(6, 10)
    x = torch.randn(2, 4, 6)
    before = x.clone()
    out = module(x)
    torch.testing.assert_close(out, before + module.weight[:4])
    assert torch.equal(x, before)
    assert sum(p.numel() for p in module.parameters()) == 10 * 6
    assert_gradients_reach_every_parameter(module, module(torch.randn(2, 10, 6)))


@pytest.mark.parametrize("kind", KINDS)
def test_positional_start_equals_slicing_a_longer_sequence(kind):
    module = kind(6, 10).eval()
    x = torch.randn(2, 7, 6)
    torch.testing.assert_close(module(x[:, 4:], start=4), module(x)[:, 4:])
    torch.testing.assert_close(module(x[:, 4:], 4), module(x)[:, 4:])


@pytest.mark.parametrize("kind", KINDS)
def test_positional_rejects_a_bad_start(kind):
    module = kind(4, 6)
    with pytest.raises(TypeError, match=r"start must be an int >= 0, got -1"):
        module(torch.randn(1, 2, 4), start=-1)
    with pytest.raises(TypeError, match=r"start must be an int >= 0, got 1.0"):
        module(torch.randn(1, 2, 4), start=1.0)
    with pytest.raises(
        ValueError, match=r"x has sequence length L=7, longer than max_len=6"
    ):
        module(torch.randn(1, 3, 4), start=4)


@pytest.mark.parametrize("kind", KINDS)
def test_positional_takes_dropout_by_keyword_only(kind):
    with pytest.raises(TypeError, match="positional argument"):
        kind(4, 8, 0.1)
    assert kind(4, 8, dropout=0.25).dropout.p == 0.25


@pytest.mark.parametrize("kind", KINDS)
def test_positional_dropout_acts_only_in_training(kind):
    module = kind(8, 16, dropout=0.5)
    x = torch.randn(2, 5, 8)
    assert_dropout_only_in_training(module, lambda: module(x))


@pytest.mark.parametrize("kind", KINDS)
def test_positional_accepts_exactly_max_len_and_rejects_longer(kind):
    module = kind(4, 6)
    assert module(torch.randn(1, 6, 4)).shape == (1, 6, 4)
    with pytest.raises(
        ValueError, match=r"x has sequence length L=7, longer than max_len=6"
    ):
        module(torch.randn(1, 7, 4))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("x", "error", "match"),
    [
        (
            torch.randn(5, 4),
            ValueError,
            r"x must have 3 dimensions \(B, L, d_model\), got shape \(5, 4\)",
        ),
        (
            torch.randn(2, 5, 3),
            ValueError,
            r"x must have shape \(B, L, d_model\) with last dimension 4, "
            r"got shape \(2, 5, 3\)",
        ),
        (torch.randn(2, 0, 4), ValueError, r"x must not be empty"),
        (
            torch.ones(2, 3, 4, dtype=torch.long),
            TypeError,
            r"x must be a floating-point tensor",
        ),
    ],
)
def test_positional_rejects_bad_inputs(kind, x, error, match):
    with pytest.raises(error, match=match):
        kind(4, 8)(x)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((0, 8), {}, ValueError, "d_model must be a positive int"),
        ((4, -1), {}, ValueError, "max_len must be a positive int"),
        ((4, 8.5), {}, TypeError, "max_len must be a positive int"),
        ((4, 8), {"dropout": 1.5}, ValueError, "dropout must be in"),
    ],
)
def test_positional_rejects_bad_constructor_arguments(kind, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        kind(*args, **kwargs)


def test_sinusoidal_positional_encoding_rejects_odd_d_model():
    with pytest.raises(ValueError, match="d_model must be even"):
        SinusoidalPositionalEncoding(5, 8)
