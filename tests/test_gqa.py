import pytest
import torch
import torch.nn.functional as F

from _support import assert_close, assert_gradients_reach_every_parameter
from transformer import (
    GroupedQueryAttention,
    MultiHeadAttention,
    RotaryEmbedding,
    causal_mask,
)
from transformer.parts.kv_cache import LayerKVCache


def split(x, heads):
    B, L, _ = x.shape
    return x.view(B, L, heads, -1).transpose(1, 2)


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4, 8])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("need_weights", [False, True])
def test_gqa_equals_torch_sdpa_with_enable_gqa(n_kv_heads, dtype, need_weights):
    attn = GroupedQueryAttention(32, 8, n_kv_heads=n_kv_heads).to(dtype)
    x = torch.randn(2, 7, 32, dtype=dtype)
    mask = causal_mask(7)
    q, k, v = (
        split(attn.w_q(x), 8),
        split(attn.w_k(x), n_kv_heads),
        split(attn.w_v(x), n_kv_heads),
    )
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    expected = attn.w_o(heads.transpose(1, 2).reshape(2, 7, 32))
    assert_close(attn(x, x, x, mask, need_weights=need_weights), expected)
    assert (attn.attn_weights is not None) == need_weights


@pytest.mark.parametrize("need_weights", [False, True])
def test_gqa_with_as_many_kv_heads_as_heads_equals_multi_head_attention(need_weights):
    gqa = GroupedQueryAttention(24, 4, n_kv_heads=4)
    mha = MultiHeadAttention(24, 4, bias=False)
    mha.load_state_dict(gqa.state_dict())
    x = torch.randn(3, 6, 24)
    mask = torch.rand(3, 1, 1, 6) > 0.3
    assert_close(gqa(x, x, x, mask, need_weights=need_weights), mha(x, x, x, mask))


def test_gqa_with_one_kv_head_is_multi_query_attention():
    attn = GroupedQueryAttention(32, 8, n_kv_heads=1)
    assert (
        attn.w_k.weight.shape == attn.w_v.weight.shape == (4, 32)
    )  # one head of d_k = 4
    x = torch.randn(2, 5, 32)
    attn(x, x, x, need_weights=True)
    q, k = split(attn.w_q(x), 8), split(attn.w_k(x), 1)
    # Every query head reads the same keys: its scores are q_i · k of the one key head.
    scores = q @ k.transpose(-2, -1) / 2.0  # (B, 8, L, L)
    assert_close(attn.attn_weights, scores.softmax(-1))


def test_gqa_weights_sum_to_one_and_fully_masked_rows_give_zeros_on_both_paths():
    attn = GroupedQueryAttention(16, 4, n_kv_heads=2)
    x = torch.randn(2, 5, 16)
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    mask[0, 0, 1] = False
    fast, slow = attn(x, x, x, mask), attn(x, x, x, mask, need_weights=True)
    assert_close(fast, slow)
    assert_close(
        fast[0, 1],
        attn.w_o.weight.new_zeros(16) if attn.w_o.bias is None else attn.w_o.bias,
    )
    sums = attn.attn_weights.sum(-1)
    assert_close(sums[1], torch.ones(4, 5))


def test_gqa_with_rope_and_a_cache_equals_the_whole_sequence_at_once():
    rope = RotaryEmbedding(4, max_len=16)
    attn = GroupedQueryAttention(16, 4, n_kv_heads=2, rope=rope)
    x = torch.randn(2, 9, 16)
    whole = attn(x, x, x, causal_mask(9))
    attn.cache = cache = LayerKVCache()
    prompt = x[:, :5]
    first = attn(prompt, prompt, prompt, causal_mask(5))
    steps = [attn(*[x[:, t : t + 1]] * 3) for t in range(5, 9)]
    assert_close(torch.cat([first, *steps], dim=1), whole)
    assert cache.length == 9
    # key and value, B, h_kv, T, d_k
    assert cache.key.shape == cache.value.shape == (2, 2, 9, 4)


def test_gqa_gradients_reach_every_parameter():
    attn = GroupedQueryAttention(
        16, 4, n_kv_heads=2, rope=RotaryEmbedding(4, 8), bias=True
    )
    x = torch.randn(2, 5, 16)
    assert_gradients_reach_every_parameter(attn, attn(x, x, x))


def test_gqa_rejects_bad_input():
    with pytest.raises(ValueError, match="h must be divisible by n_kv_heads"):
        GroupedQueryAttention(24, 4, n_kv_heads=3)
    with pytest.raises(ValueError, match="rope"):
        GroupedQueryAttention(24, 4, n_kv_heads=2, rope=RotaryEmbedding(4, 8))
    attn = GroupedQueryAttention(16, 4, n_kv_heads=2)
    with pytest.raises(ValueError, match=r"\(B, L, d_model\).*\(2, 5, 8\)"):
        attn(*[torch.randn(2, 5, 8)] * 3)
    with pytest.raises(ValueError, match=r"mask.*\(B, h, L, S\).*\(4, 4\)"):
        attn(*[torch.randn(2, 5, 16)] * 3, torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="rotary positions is self-attention"):
        rotary = GroupedQueryAttention(16, 4, rope=RotaryEmbedding(4, 8))
        rotary(torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16))
