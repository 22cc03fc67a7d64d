"""The causal mask that is never built: CAUSAL reaches PyTorch's kernel as
``is_causal=True`` or as no mask, and gives the numbers of the built mask."""

import pytest
import torch
import torch.nn.functional as F

import transformer.parts.attention as attention
import transformer.parts.masks as masks
from transformer import DecoderOnlyConfig, DecoderOnlyTransformer, causal_mask
from transformer.parts.attention import fused_attention
from transformer.parts.masks import CAUSAL, mask_tensor
from transformer.parts.multihead import MultiHeadAttention

LLAMA = dict(
    vocab_size=20, d_model=32, h=4, d_ff=48, N=2, max_len=24, norm_first=True,
    norm="rms", activation="swiglu", positional="rope", n_kv_heads=2,
)  # fmt: skip


def test_mask_tensor_builds_the_last_rows_of_the_causal_mask():
    assert torch.equal(mask_tensor(CAUSAL, 5, 5), causal_mask(5))
    assert torch.equal(mask_tensor(CAUSAL, 2, 5), causal_mask(5)[3:])
    mask = causal_mask(3)
    assert mask_tensor(mask, 3, 3) is mask and mask_tensor(None, 3, 3) is None


@pytest.mark.parametrize("L, S", [(6, 6), (1, 6), (3, 6)])
def test_fused_attention_with_causal_equals_the_built_mask(device, L, S):
    q = torch.randn(2, 3, L, 8, device=device)
    k, v = torch.randn(2, 2, 3, S, 8, device=device)
    built = causal_mask(S, device=device)[S - L :]
    expected = fused_attention(q, k, v, built)
    torch.testing.assert_close(fused_attention(q, k, v, CAUSAL), expected)


def test_multihead_attention_with_causal_equals_the_built_mask_with_weights(device):
    mha = MultiHeadAttention(16, 4).to(device).eval()
    x = torch.randn(2, 5, 16, device=device)
    expected = mha(x, x, x, causal_mask(5, device=device), need_weights=True)
    weights = mha.attn_weights
    torch.testing.assert_close(mha(x, x, x, CAUSAL, need_weights=True), expected)
    torch.testing.assert_close(mha.attn_weights, weights)
    torch.testing.assert_close(mha(x, x, x, CAUSAL), expected)


def _record_kernel_calls(monkeypatch) -> list[dict]:
    calls = []
    kernel = F.scaled_dot_product_attention

    def recording(*args, **kwargs):
        calls.append(kwargs)
        return kernel(*args, **kwargs)

    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", recording)
    return calls


def test_a_decoder_forward_without_a_mask_builds_none_and_asks_for_is_causal(
    monkeypatch,
):
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**LLAMA)).eval()
    x = torch.randint(0, 20, (2, 9))
    expected = model(x, causal_mask(9))
    calls = _record_kernel_calls(monkeypatch)
    monkeypatch.setattr(masks, "causal_mask", lambda *a, **k: pytest.fail("built"))
    # identical numbers, not only close ones
    assert torch.equal(model(x), expected)
    assert calls == [{"dropout_p": 0.0, "is_causal": True}] * 2


def test_one_new_token_after_the_cache_attends_with_no_mask(monkeypatch):
    from transformer import KVCache

    model = DecoderOnlyTransformer(DecoderOnlyConfig(**LLAMA)).eval()
    x = torch.randint(0, 20, (2, 9))
    full = model(x)[:, -1]
    cache = KVCache(model)
    cache(x[:, :8])
    calls = _record_kernel_calls(monkeypatch)
    torch.testing.assert_close(cache(x[:, 8:])[:, -1], full)
    assert calls == [{"dropout_p": 0.0}] * 2
