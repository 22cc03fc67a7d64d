import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import assert_close, assert_dropout_only_in_training
from transformer import RotaryEmbedding
from transformer.parts.rotary import EmbeddingDropout


def test_rope_preserves_norms():
    rope = RotaryEmbedding(16, max_len=64)
    x = torch.randn(2, 3, 64, 16, dtype=torch.float64)
    assert_close(rope(x).norm(dim=-1), x.norm(dim=-1))


def test_rope_position_zero_is_the_identity():
    rope = RotaryEmbedding(8, max_len=10)
    x = torch.randn(2, 3, 1, 8)
    assert torch.equal(rope(x), x)
    longer = torch.randn(1, 1, 5, 8)
    assert torch.equal(rope(longer)[..., 0, :], longer[..., 0, :])


def test_rope_rotates_each_pair_by_position_times_frequency():
    rope = RotaryEmbedding(4, max_len=8, base=100.0)
    x = torch.zeros(1, 1, 8, 4, dtype=torch.float64)
    x[..., 0] = 1.0  # first pair (1, 0), frequency 1
    x[..., 2] = 1.0  # second pair (1, 0), frequency 100^(-1/2) = 0.1
    out = rope.double()(x)[0, 0]  # (8, 4)
    m = torch.arange(8, dtype=torch.float64)
    expected = torch.stack([m.cos(), m.sin(), (0.1 * m).cos(), (0.1 * m).sin()], dim=-1)
    assert_close(out, expected)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 60), n=st.integers(0, 60), shift=st.integers(0, 60))
def test_rope_scores_depend_only_on_the_distance(m, n, shift):
    rope = RotaryEmbedding(8, max_len=128).double()
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, 1, 8, generator=g, dtype=torch.float64)
    k = torch.randn(1, 1, 1, 8, generator=g, dtype=torch.float64)
    score = (rope(q, m) * rope(k, n)).sum()
    shifted = (rope(q, m + shift) * rope(k, n + shift)).sum()
    assert_close(score, shifted)


def test_rope_offset_equals_slicing_a_longer_sequence():
    rope = RotaryEmbedding(8, max_len=16)
    x = torch.randn(2, 2, 10, 8)
    assert_close(rope(x[:, :, 4:], offset=4), rope(x)[:, :, 4:])


def test_rope_takes_base_by_keyword_only():
    with pytest.raises(TypeError, match="positional argument"):
        RotaryEmbedding(4, 8, 100.0)
    assert RotaryEmbedding(4, 8).base == 10000.0
    with pytest.raises(ValueError, match="base must be a positive float"):
        RotaryEmbedding(4, 8, base=0.0)


def test_embedding_dropout_drops_in_training_and_ignores_start():
    module = EmbeddingDropout(0.5)
    x = torch.randn(2, 5, 8)
    assert_dropout_only_in_training(module, lambda: module(x, start=3))
    assert torch.equal(module.eval()(x, 7), x)
    assert list(module.parameters()) == []


def test_embedding_dropout_rejects_bad_input():
    with pytest.raises(ValueError, match="dropout must be in"):
        EmbeddingDropout(1.0)
    module = EmbeddingDropout()
    with pytest.raises(TypeError, match="start must be an int >= 0, got -1"):
        module(torch.randn(1, 2, 4), start=-1)
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        module(torch.ones(1, 2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"x must have 3 dimensions.*\(2, 4\)"):
        module(torch.randn(2, 4))


def test_rope_rejects_bad_input():
    rope = RotaryEmbedding(8, max_len=4)
    with pytest.raises(ValueError, match=r"max_len=4"):
        rope(torch.randn(1, 1, 3, 8), offset=2)
    with pytest.raises(ValueError, match=r"\(B, h, L, d_k\).*\(1, 3, 8\)"):
        rope(torch.randn(1, 3, 8))
    with pytest.raises(ValueError, match=r"d_k=8.*\(1, 1, 3, 6\)"):
        rope(torch.randn(1, 1, 3, 6))
    with pytest.raises(ValueError, match="offset"):
        rope(torch.randn(1, 1, 3, 8), offset=-1)
    with pytest.raises(ValueError, match="even"):
        RotaryEmbedding(7, max_len=4)
