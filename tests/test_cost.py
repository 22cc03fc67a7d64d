import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer import scaled_dot_product_attention
from transformer.tools.cost import count_flops, largest_tensor


def test_count_flops_counts_a_matrix_product_as_two_per_multiply_add():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    assert count_flops(torch.mm, a, b) == 2 * 3 * 4 * 5
    assert count_flops(nn.Linear(4, 5), a) == 2 * 3 * 4 * 5


def test_count_flops_counts_torch_fused_attention_on_cpu_like_ours():
    q = torch.randn(2, 3, 10, 8)
    k = torch.randn(2, 3, 12, 8)
    expected = 2 * 2 * 3 * 10 * 12 * (8 + 8)
    assert count_flops(F.scaled_dot_product_attention, q, k, k) == expected
    assert count_flops(scaled_dot_product_attention, q, k, k) == expected
    kv = torch.randn(2, 1, 12, 8)  # grouped-query: flops follow the query heads
    assert (
        count_flops(lambda: F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True))
        == expected
    )


def test_largest_tensor_finds_an_unnamed_intermediate():
    x = torch.randn(4, 5)
    largest = largest_tensor(
        lambda: (x[:, :, None] * x[:, None, :]).sum()
    )  # (4, 5, 5) inside
    assert largest.shape == (4, 5, 5) and largest.numel == 100 and largest.nbytes == 400
    assert largest.op == "aten.mul"


def test_cost_functions_reject_what_is_not_callable():
    with pytest.raises(TypeError, match="fn"):
        count_flops(3)
    with pytest.raises(TypeError, match="fn"):
        largest_tensor("x")
