import pytest
import torch
import torch.nn as nn

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    KVCache,
    generate,
    next_token,
)

BASE = dict(vocab_size=17, d_model=16, h=4, N=2, d_ff=24, dropout=0.1, max_len=20)
CONFIGS = {
    "paper": {},
    "pre-norm gelu learned": dict(
        norm_first=True, activation="gelu", positional="learned"
    ),
    "rms swiglu": dict(norm="rms", activation="swiglu"),
    "gqa sinusoidal": dict(n_kv_heads=2),
    "rope mha": dict(positional="rope"),
    "llama": dict(
        norm_first=True,
        norm="rms",
        activation="swiglu",
        positional="rope",
        n_kv_heads=2,
    ),
    "mqa shared": dict(n_kv_heads=1, positional="rope", share_embeddings=True),
}


def model(name, seed=0):
    torch.manual_seed(seed)
    return DecoderOnlyTransformer(DecoderOnlyConfig(**BASE, **CONFIGS[name]))


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize(
    "settings", [{}, dict(temperature=1.0), dict(temperature=0.8, top_k=5, top_p=0.9)]
)
def test_generate_gives_the_same_tokens_with_and_without_the_cache(name, settings):
    m = model(name)
    prompt = torch.randint(0, 17, (3, 4), generator=torch.Generator().manual_seed(1))
    runs = [
        generate(
            m,
            prompt,
            16,
            use_cache=use_cache,
            generator=torch.Generator().manual_seed(2),
            **settings,
        )
        for use_cache in (True, False)
    ]
    assert runs[0].shape == (3, 20)
    assert torch.equal(runs[0][:, :4], prompt)
    assert torch.equal(runs[0], runs[1])


@pytest.mark.parametrize("name", CONFIGS)
def test_cached_forward_equals_the_whole_sequence(name):
    m = model(name).eval()
    ids = torch.randint(0, 17, (2, 11))
    cache = KVCache(m)
    with torch.no_grad():
        parts = [cache(ids[:, :6]), cache(ids[:, 6:9])]
        parts += [cache(ids[:, t : t + 1]) for t in range(9, 11)]
        whole = m(ids)
    torch.testing.assert_close(torch.cat(parts, dim=1), whole, atol=1e-5, rtol=0)
    assert cache.length == 11 and len(cache) == m.config.N
    # The cache is attached only while it runs the model.
    assert all(attn.cache is None for attn in cache.attentions)


def test_greedy_generation_takes_the_argmax_at_every_step():
    m = model("llama").eval()
    out = generate(m, torch.tensor([[1, 2, 3]]), 5)
    with torch.no_grad():
        for t in range(3, 8):
            assert out[0, t] == m(out[:, :t])[0, -1].argmax()


def test_generate_restores_the_training_mode_and_uses_the_model_device():
    m = model("paper")
    m.train()
    out = generate(m, torch.tensor([[1, 2]]), 3)
    assert m.training and out.device == next(m.parameters()).device
    m.eval()
    generate(m, torch.tensor([[1, 2]]), 3, use_cache=False)
    assert not m.training


def test_generate_rejects_more_tokens_than_max_len():
    m = model("paper")
    with pytest.raises(ValueError, match=r"max_new_tokens=17.*max_len=20"):
        generate(m, torch.zeros(1, 4, dtype=torch.long), 17)
    generate(m, torch.zeros(1, 4, dtype=torch.long), 16)  # exactly fits


def test_generate_rejects_bad_input():
    m = model("paper")
    prompt = torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="model"):
        generate(torch.nn.Linear(2, 2), prompt, 2)
    with pytest.raises(ValueError, match=r"prompt.*\(B, L\).*\(3,\)"):
        generate(m, torch.zeros(3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="temperature"):
        generate(m, prompt, 2, temperature=-1.0)
    with pytest.raises(ValueError, match="top_p"):
        generate(m, prompt, 2, temperature=1.0, top_p=0.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(m, prompt, 0)


def test_next_token_top_k_and_top_p_only_draw_from_the_kept_tokens():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    g = torch.Generator().manual_seed(0)
    top2 = {
        next_token(logits, temperature=1.0, top_k=2, generator=g).item()
        for _ in range(200)
    }
    assert top2 == {0, 1}
    nucleus = {
        next_token(logits, temperature=1.0, top_p=0.8, generator=g).item()
        for _ in range(200)
    }
    assert nucleus == {0, 1}  # 0.5 + 0.3 reaches 0.8: token 2 is dropped
    everything = {
        next_token(logits, temperature=1.0, generator=g).item() for _ in range(400)
    }
    assert everything == {0, 1, 2, 3}
    assert next_token(logits).item() == 0


def test_forward_rejects_a_cache_that_does_not_fit():
    m = model("llama")
    with pytest.raises(TypeError, match="attention layers that can hold a KV cache"):
        KVCache(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="start must be the number of positions"):
        m(torch.zeros(1, 3, dtype=torch.long), start=4)
    cache = KVCache(m)
    with torch.no_grad():
        cache(torch.zeros(1, 15, dtype=torch.long))
    with pytest.raises(ValueError, match="max_len=20"):
        cache(torch.zeros(1, 6, dtype=torch.long))
    assert cache.length == 15  # the rejected call added nothing
