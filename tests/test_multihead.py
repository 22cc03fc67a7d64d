import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import MultiHeadAttention, causal_mask, padding_mask


def make(d_model=16, h=4, **kwargs):
    torch.manual_seed(0)
    return MultiHeadAttention(d_model, h, **kwargs).eval()


@settings(max_examples=25, deadline=None)
@given(
    B=st.integers(1, 3),
    L=st.integers(1, 6),
    S=st.integers(1, 6),
    h=st.integers(1, 4),
    d_k=st.integers(1, 4),
)
def test_multihead_attention_shapes_and_rows_sum_to_one(B, L, S, h, d_k):
    mha = make(h * d_k, h)
    q, kv = torch.randn(B, L, h * d_k), torch.randn(B, S, h * d_k)
    out = mha(q, kv, kv, need_weights=True)
    assert out.shape == (B, L, h * d_k)
    assert mha.attn_weights.shape == (B, h, L, S)
    torch.testing.assert_close(mha.attn_weights.sum(-1), torch.ones(B, h, L))


def test_multihead_attention_weights_are_detached_and_none_before_forward():
    mha = make()
    assert mha.attn_weights is None
    x = torch.randn(2, 5, 16, requires_grad=True)
    mha(x, x, x, need_weights=True)
    assert not mha.attn_weights.requires_grad


def test_multihead_attention_heads_use_their_own_slice():
    mha = make(d_model=8, h=2)
    x = torch.randn(1, 4, 8)
    mha(x, x, x, need_weights=True)
    q = mha.w_q(x).view(1, 4, 2, 4).transpose(1, 2)
    k = mha.w_k(x).view(1, 4, 2, 4).transpose(1, 2)
    expected = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    torch.testing.assert_close(mha.attn_weights, expected)


def test_multihead_attention_causal_outputs_ignore_future_tokens():
    mha = make()
    x = torch.randn(2, 6, 16)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 2, 16)
    mask = causal_mask(6)
    torch.testing.assert_close(
        mha(x, x, x, mask)[:, :4], mha(changed, changed, changed, mask)[:, :4]
    )


def test_multihead_attention_padded_keys_do_not_change_outputs():
    mha = make()
    q, kv = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    mask = padding_mask([5, 2])
    changed = kv.clone()
    changed[1, 2:] = 100.0
    torch.testing.assert_close(mha(q, kv, kv, mask), mha(q, changed, changed, mask))
    mha(q, changed, changed, mask, need_weights=True)
    assert (mha.attn_weights[1, :, :, 2:] == 0).all()


def test_multihead_attention_gradients_reach_every_parameter():
    mha = make()
    q, kv = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    assert_gradients_reach_every_parameter(mha, mha(q, kv, kv))


@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_parameter_count_matches_formula(bias):
    d_model = 24
    mha = MultiHeadAttention(d_model, 3, bias=bias)
    expected = 4 * d_model * d_model + (4 * d_model if bias else 0)
    assert sum(p.numel() for p in mha.parameters()) == expected


def test_multihead_attention_dropout_acts_only_in_training():
    mha = make(dropout=0.5)
    x = torch.randn(2, 5, 16)
    assert_dropout_only_in_training(mha, lambda: mha(x, x, x))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"d_model": 10, "h": 3}, ValueError, "d_model must be divisible by h"),
        ({"d_model": 0, "h": 1}, ValueError, "d_model must be a positive int"),
        ({"d_model": 8, "h": -2}, ValueError, "h must be a positive int"),
        ({"d_model": 8.0, "h": 2}, TypeError, "d_model must be a positive int"),
        ({"d_model": 8, "h": 2, "dropout": 1.0}, ValueError, "dropout must be in"),
    ],
)
def test_multihead_attention_rejects_bad_constructor_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        MultiHeadAttention(**kwargs)


X = torch.randn(2, 5, 16)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (torch.randn(5, 16), X, X),
            ValueError,
            r"query must have 3 dimensions \(B, L, d_model\), got shape \(5, 16\)",
        ),
        (
            (X, torch.randn(2, 5, 12), X),
            ValueError,
            r"key must have shape \(B, S, d_model\) with last dimension 16, got "
            r"shape \(2, 5, 12\)",
        ),
        (
            (X, X, torch.randn(2, 4, 16)),
            ValueError,
            r"key and value must have shape .* got key \(2, 5, 16\) and value \(2, "
            r"4, 16\)",
        ),
        (
            (X, torch.randn(3, 5, 16), torch.randn(3, 5, 16)),
            ValueError,
            r"B=2 as in query",
        ),
        (
            (torch.randn(2, 0, 16), X, X),
            ValueError,
            r"query must not be empty .* got shape \(2, 0, 16\)",
        ),
        ((X.long(), X, X), TypeError, "query must be a floating-point tensor"),
        (
            (X, X.double(), X),
            TypeError,
            "key and value must have the dtype of query, torch.float32",
        ),
        (([[1.0]], X, X), TypeError, "query must be a torch.Tensor"),
        ((X, X, X, torch.ones(5, 5)), TypeError, "mask must be a boolean tensor"),
        (
            (X, X, X, torch.ones(4, 5, dtype=torch.bool)),
            ValueError,
            r"mask must broadcast to \(B, h, L, S\) = \(2, 4, 5, 5\), got shape "
            r"\(4, 5\)",
        ),
        (
            (X, X, X, torch.ones(2, 5, 5, dtype=torch.bool)),
            ValueError,
            r"mask must broadcast .* got shape \(2, 5, 5\)",
        ),
    ],
)
def test_multihead_attention_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        make()(*args)
