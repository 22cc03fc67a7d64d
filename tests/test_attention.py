"""Tests of transformer.parts.attention.scaled_dot_product_attention."""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer import causal_mask, padding_mask, scaled_dot_product_attention


def _qkv(*batch, L=5, S=7, d_k=8, d_v=6, dtype=torch.float32):
    return (
        torch.randn(*batch, L, d_k, dtype=dtype),
        torch.randn(*batch, S, d_k, dtype=dtype),
        torch.randn(*batch, S, d_v, dtype=dtype),
    )


def test_attention_shapes_for_batches_and_heads():
    for batch in [(), (3,), (2, 4)]:
        q, k, v = _qkv(*batch)
        out, w = scaled_dot_product_attention(q, k, v)
        assert out.shape == (*batch, 5, 6)
        assert w.shape == (*batch, 5, 7)


def test_attention_rows_sum_to_one():
    q, k, v = _qkv(2, 3)
    _, w = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))
    assert (w >= 0).all()


def test_attention_matches_formula_by_hand():
    q, k, v = _qkv(2, dtype=torch.float64)
    expected = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1) @ v
    out, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_attention_equals_torch_sdpa_with_and_without_masks(dtype, atol):
    q, k, v = _qkv(2, 3, L=6, S=6, dtype=dtype)
    random_mask = torch.rand(2, 3, 6, 6) > 0.4
    random_mask[..., 0] = True
    for mask in [
        None,
        causal_mask(6),
        random_mask,
        causal_mask(6) & padding_mask([6, 4]),
    ]:
        ours, _ = scaled_dot_product_attention(q, k, v, mask=mask)
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        torch.testing.assert_close(ours, theirs, rtol=0, atol=atol)


def test_attention_masked_keys_get_zero_weight():
    q, k, v = _qkv(2)
    mask = torch.rand(2, 5, 7) > 0.5
    mask[..., 2] = True
    _, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert (w[~mask] == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 5))


def test_attention_fully_masked_row_gives_zeros_not_nan():
    q, k, v = _qkv(1, L=3, S=4)
    mask = torch.ones(1, 3, 4, dtype=torch.bool)
    mask[0, 1] = False
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert not out.isnan().any() and not w.isnan().any()
    assert (w[0, 1] == 0).all() and (out[0, 1] == 0).all()
    q.requires_grad_(True)
    out, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    out.sum().backward()
    assert not q.grad.isnan().any()


def test_attention_causal_output_ignores_future_values():
    q, k, v = _qkv(1, L=6, S=6)
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(6))
    k2, v2 = k.clone(), v.clone()
    k2[:, 4:], v2[:, 4:] = torch.randn(1, 2, 8), torch.randn(1, 2, 6)
    out2, _ = scaled_dot_product_attention(q, k2, v2, mask=causal_mask(6))
    torch.testing.assert_close(out[:, :4], out2[:, :4], rtol=0, atol=0)
    assert not torch.allclose(out[:, 4:], out2[:, 4:])


def test_attention_dropout_zeroes_weights_and_rescales():
    q, k, v = _qkv(64, L=8, S=8)
    _, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    dropped = (w == 0).float().mean().item()
    assert 0.4 < dropped < 0.6
    _, w_eval = scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    kept = w != 0
    torch.testing.assert_close(w[kept], 2 * w_eval[kept])


@pytest.mark.parametrize(
    "args,kwargs,error,match",
    [
        (("q", "k", "v"), {}, TypeError, "query must be a torch.Tensor"),
        (
            (torch.randn(4),) * 3,
            {},
            ValueError,
            r"query must have at least 2 dimensions .*\(4,\)",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(2, 5, 4), torch.randn(2, 5, 6)),
            {},
            ValueError,
            r"key must have the same last dimension d_k as query.*\(2, 5, 4\)",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 4, 6)),
            {},
            ValueError,
            r"value must have one row per key position.*\(2, 4, 6\)",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(3, 5, 8), torch.randn(3, 5, 6)),
            {},
            ValueError,
            "broadcastable leading dimensions",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)),
            {"mask": torch.ones(2, 3, 5)},
            TypeError,
            "mask must be a boolean tensor",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)),
            {"mask": torch.ones(2, 3, 4, dtype=torch.bool)},
            ValueError,
            r"mask must broadcast to \(\.\.\., L, S\) = \(2, 3, 5\), "
            r"got shape \(2, 3, 4\)",
        ),
        (
            (
                torch.randn(2, 3, 8),
                torch.randn(2, 5, 8, dtype=torch.float64),
                torch.randn(2, 5, 6),
            ),
            {},
            TypeError,
            "key must have the dtype of query, torch.float32, got torch.float64",
        ),
        (
            (torch.randn(2, 0, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)),
            {},
            ValueError,
            r"query must not be empty.*\(2, 0, 8\)",
        ),
        (
            (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)),
            {"dropout_p": 1.5},
            ValueError,
            r"dropout_p must be in \[0, 1\)",
        ),
    ],
)
def test_attention_rejects_bad_input_with_named_argument(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(*args, **kwargs)
