import pytest
import torch
import torch.nn.functional as F

from _support import assert_close
from transformer import scaled_dot_product_attention, tiled_attention
from transformer.tools.cost import largest_tensor

SIZES = [  # (L, S, block_size): not divisible, block 1, block > L, L != S
    (10, 10, 4),
    (7, 13, 3),
    (13, 7, 5),
    (9, 9, 1),
    (5, 11, 64),
    (64, 64, 16),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("L, S, block_size", SIZES)
@pytest.mark.parametrize("is_causal", [False, True])
def test_tiled_attention_equals_torch_sdpa_with_gradients(
    dtype, L, S, block_size, is_causal
):
    g = torch.Generator().manual_seed(L * 100 + S)
    q, k = (torch.randn(2, 3, n, 8, generator=g, dtype=dtype) for n in (L, S))
    v = torch.randn(2, 3, S, 5, generator=g, dtype=dtype)
    inputs = [t.requires_grad_() for t in (q, k, v)]
    ours = tiled_attention(*inputs, is_causal=is_causal, block_size=block_size)
    theirs = F.scaled_dot_product_attention(*inputs, is_causal=is_causal)
    assert_close(ours, theirs)
    grad = torch.randn_like(ours)
    for a, b in zip(
        torch.autograd.grad(ours, inputs, grad),
        torch.autograd.grad(theirs, inputs, grad),
    ):
        assert_close(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("L, S, block_size", SIZES)
def test_tiled_attention_equals_torch_sdpa_with_a_boolean_mask(dtype, L, S, block_size):
    g = torch.Generator().manual_seed(L + S)
    q = torch.randn(2, 3, L, 8, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(2, 3, S, 8, generator=g, dtype=dtype, requires_grad=True)
    v = torch.randn(2, 3, S, 8, generator=g, dtype=dtype, requires_grad=True)
    mask = torch.rand(2, 1, L, S, generator=g) > 0.4
    mask[..., 0] = True  # every row sees a key, so PyTorch's result is defined
    ours = tiled_attention(q, k, v, mask, block_size=block_size)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert_close(ours, theirs)
    ga = torch.autograd.grad(ours.sum(), (q, k, v))
    gb = torch.autograd.grad(theirs.sum(), (q, k, v))
    for a, b in zip(ga, gb):
        assert_close(a, b)


def test_tiled_attention_gives_zeros_for_a_fully_masked_row_like_ours():
    q, k, v = (torch.randn(1, 2, 6, 4, requires_grad=True) for _ in range(3))
    mask = torch.ones(6, 6, dtype=torch.bool).tril()
    mask[2] = False
    out = tiled_attention(q, k, v, mask, block_size=4)
    assert torch.equal(out[:, :, 2], torch.zeros(1, 2, 4))
    assert_close(out, scaled_dot_product_attention(q, k, v, mask)[0])
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


def test_tiled_attention_never_forms_a_score_matrix_larger_than_a_block():
    q = torch.randn(1, 2, 256, 8)
    naive = largest_tensor(lambda: scaled_dot_product_attention(q, q, q))
    tiled = largest_tensor(lambda: tiled_attention(q, q, q, block_size=32))
    assert naive.numel == 2 * 256 * 256  # the (B, h, L, S) scores
    assert tiled.numel == q.numel()  # the output itself; every block is smaller
    scores = largest_tensor(lambda: tiled_attention(q[..., :1, :], q, q, block_size=32))
    # One query: the biggest thing is a (1, 32) row or v block.
    assert scores.numel <= 2 * 32 * 8


def test_tiled_attention_rejects_bad_input():
    q = torch.randn(1, 4, 8)
    with pytest.raises(ValueError, match=r"d_k.*\(1, 4, 6\)"):
        tiled_attention(q, torch.randn(1, 4, 6), q)
    with pytest.raises(ValueError, match="not both"):
        tiled_attention(q, q, q, torch.ones(4, 4, dtype=torch.bool), is_causal=True)
    with pytest.raises(ValueError, match=r"mask.*\(1, 4, 4\).*\(3, 4\)"):
        tiled_attention(q, q, q, torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask"):
        tiled_attention(q, q, q, torch.ones(4, 4))
    with pytest.raises(ValueError, match="block_size"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(TypeError, match="dtype"):
        tiled_attention(q, q.double(), q)
