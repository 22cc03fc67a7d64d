import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer import scaled_dot_product_attention
from transformer.tools.cost import count_flops, kept_for_backward, largest_tensor


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


def naive_attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def test_kept_for_backward_counts_the_weights_of_naive_attention_once():
    # softmax keeps its L x L output, and the product with v saves the same
    # storage again: counted once; the inputs are left out
    assert kept_for_backward(naive_attention, L=32, d=8) == 4 * 32 * 32
    assert kept_for_backward(naive_attention, L=64, d=8) == 4 * 64 * 64


def test_kept_for_backward_leaves_out_the_inputs_and_passes_options():
    assert kept_for_backward(lambda q, k, v: q * 2 + k + v, L=8, d=4) == 0

    def scaled(q, k, v, *, by):
        return (q * k).sum() * by

    # q * k saves q and k only (inputs); the sum saves nothing; by is a float
    assert kept_for_backward(scaled, L=8, d=4, by=2.0) == 0
    # the package's attention keeps its weights, as the naive one does
    assert kept_for_backward(scaled_dot_product_attention, L=32, d=8) == 4 * 32 * 32


def test_kept_for_backward_rejects_bad_arguments():
    with pytest.raises(TypeError, match="attend"):
        kept_for_backward(3)
    with pytest.raises(ValueError, match="L must be a positive int, got 0"):
        kept_for_backward(naive_attention, L=0)
    with pytest.raises(TypeError, match="d must be a positive int, got float 2.5"):
        kept_for_backward(naive_attention, d=2.5)
