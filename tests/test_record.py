import pytest
import torch

from _support import assert_close
from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
    record_attention,
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "mask_kind", ["none", "causal", "padding", "fully masked rows"]
)
def test_fast_path_equals_the_path_that_keeps_weights(dtype, mask_kind):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).to(dtype).eval()
    q, kv = torch.randn(3, 5, 16, dtype=dtype), torch.randn(3, 7, 16, dtype=dtype)
    mask = {
        "none": None,
        "causal": torch.ones(5, 7, dtype=torch.bool).tril(),
        "padding": padding_mask([7, 3, 1]),
        "fully masked rows": torch.rand(3, 1, 5, 7) > 0.7,
    }[mask_kind]
    fast = mha(q, kv, kv, mask)
    assert mha.attn_weights is None
    slow = mha(q, kv, kv, mask, need_weights=True)
    assert mha.attn_weights.shape == (3, 4, 5, 7)
    assert_close(fast, slow)


def test_fast_path_gradients_equal_the_slow_path():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 6, 16, dtype=torch.float64, requires_grad=True)
    mha = mha.double()
    grads = []
    for need in (False, True):
        mha.zero_grad()
        out = mha(x, x, x, causal_mask(6), need_weights=need)
        grads.append(torch.autograd.grad(out.sum(), [x, *mha.parameters()]))
    for a, b in zip(*grads):
        assert_close(a, b)


def test_record_attention_switches_every_attention_of_a_model_and_restores_it():
    config = TransformerConfig(11, 11, d_model=16, h=4, N=2, d_ff=32, max_len=10)
    model = Transformer(config).eval()
    src, tgt = torch.randint(0, 11, (2, 6)), torch.randint(0, 11, (2, 5))
    attentions = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    assert len(attentions) == 2 + 2 * 2
    with record_attention(model) as same:
        assert same is model
        recorded = model(src, tgt)
    assert all(m.attn_weights is not None for m in attentions)
    cross = model.decoder.layers[0].cross_attn.attn_weights
    assert cross.shape == (2, 4, 5, 6)
    assert_close(cross.sum(-1), torch.ones(2, 4, 5))
    assert not any(m.record_weights for m in attentions)
    assert_close(model(src, tgt), recorded)
    assert all(m.attn_weights is None for m in attentions)


def test_record_attention_covers_grouped_query_attention():
    config = DecoderOnlyConfig(
        vocab_size=9, d_model=16, h=4, N=1, d_ff=16, n_kv_heads=2
    )
    model = DecoderOnlyTransformer(config).eval()
    with record_attention(model):
        model(torch.randint(0, 9, (1, 4)))
    weights = model.stack.layers[0].self_attn.attn_weights
    assert weights.shape == (1, 4, 4, 4)
    assert (weights[0, :, 0, 1:] == 0).all()  # causal


def test_record_attention_rejects_what_is_not_a_module():
    with pytest.raises(TypeError, match="model"):
        with record_attention("model"):
            pass
