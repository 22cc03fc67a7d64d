"""Tests of tools.teaching_multihead: both variants equal MultiHeadAttention."""

import pytest
import torch

from _support import assert_close, assert_gradients_reach_every_parameter
from transformer import MultiHeadAttention, causal_mask, count_parameters, padding_mask
from transformer.tools.teaching_multihead import (
    EinsumMultiHeadAttention,
    HeadwiseMultiHeadAttention,
)

VARIANTS = [HeadwiseMultiHeadAttention, EinsumMultiHeadAttention]


def fused(d_model=12, h=3, bias=True, dtype=torch.float32):
    return MultiHeadAttention(d_model, h, bias=bias).to(dtype).eval()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_teaching_variant_equals_multihead_in_self_attention(variant, bias, dtype):
    mha = fused(bias=bias, dtype=dtype)
    ours = variant.from_multihead(mha)
    x = torch.randn(2, 5, 12, dtype=dtype)
    assert_close(ours(x, x, x), mha(x, x, x))


@pytest.mark.parametrize("variant", VARIANTS)
def test_teaching_variant_equals_multihead_in_masked_cross_attention(variant):
    mha = fused()
    ours = variant.from_multihead(mha)
    query, memory = torch.randn(2, 4, 12), torch.randn(2, 6, 12)
    for mask in [
        padding_mask([6, 3]),
        causal_mask(6)[:4],
        torch.rand(2, 3, 4, 6) > 0.4,
    ]:
        assert_close(
            ours(query, memory, memory, mask), mha(query, memory, memory, mask)
        )


@pytest.mark.parametrize("variant", VARIANTS)
def test_teaching_variant_gives_zero_output_and_finite_gradients_for_fully_masked_rows(
    variant,
):
    mha = fused(bias=False)
    ours = variant.from_multihead(mha)
    x = torch.randn(1, 3, 12)
    mask = torch.tensor(
        [[True, True, False], [False, False, False], [True, False, True]]
    )
    out = ours(x, x, x, mask)
    assert_close(out, mha(x, x, x, mask))
    assert torch.equal(out[0, 1], torch.zeros(12))
    out.sum().backward()
    assert all(p.grad.isfinite().all() for p in ours.parameters())


@pytest.mark.parametrize("variant", VARIANTS)
def test_teaching_variant_has_as_many_parameters_as_multihead(variant):
    for d_model, h in [(12, 3), (16, 1), (16, 16)]:
        for bias in (True, False):
            expected = 4 * (d_model * d_model + (d_model if bias else 0))
            assert count_parameters(variant(d_model, h, bias=bias)) == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_teaching_variant_gradients_reach_every_parameter(variant):
    ours = variant(12, 3)
    x = torch.randn(2, 4, 12)
    assert_gradients_reach_every_parameter(ours, ours(x, x, x))


def test_headwise_head_owns_its_block_of_rows():
    mha = fused()
    ours = HeadwiseMultiHeadAttention.from_multihead(mha)
    torch.testing.assert_close(ours.heads[2].w_k.weight, mha.w_k.weight[8:12])
    torch.testing.assert_close(ours.heads[1].w_v.bias, mha.w_v.bias[4:8])


def test_from_multihead_copies_rather_than_shares_weights():
    mha = fused()
    for variant in VARIANTS:
        ours = variant.from_multihead(mha)
        with torch.no_grad():
            for p in ours.parameters():
                p.zero_()
        assert mha.w_q.weight.abs().sum() > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_teaching_variant_rejects_bad_sizes_and_shapes(variant):
    with pytest.raises(ValueError, match="d_model must be divisible by h"):
        variant(10, 3)
    with pytest.raises(TypeError, match="h must be a positive int"):
        variant(12, 3.0)
    ours = variant(12, 3)
    x = torch.randn(2, 4, 12)
    with pytest.raises(ValueError, match=r"query must have shape \(B, L, d_model\)"):
        ours(torch.randn(2, 4, 8), x, x)
    with pytest.raises(ValueError, match="key and value must have shape"):
        ours(x, x, torch.randn(2, 5, 12))
    with pytest.raises(ValueError, match=r"mask must broadcast to \(B, h, L, S\)"):
        ours(x, x, x, torch.ones(3, 3, dtype=torch.bool))
