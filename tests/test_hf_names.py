import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from transformer import DecoderOnlyTransformer, RotaryEmbedding
from transformer.tools.hf_names import HOW, config_from_hf, rope_permutation, weight_map


def rotate_half_rope(x: torch.Tensor, base: float) -> torch.Tensor:
    """Hugging Face LLaMA's rotary embedding, written out: pairs (i, i + d_k/2)."""
    L, d_k = x.shape[-2], x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d_k, 2, dtype=torch.float64) / d_k)
    angle = torch.arange(L, dtype=torch.float64)[:, None] * inv_freq
    cos, sin = torch.cat((angle, angle), -1).cos(), torch.cat((angle, angle), -1).sin()
    first, second = x[..., : d_k // 2], x[..., d_k // 2 :]
    return x * cos + torch.cat((-second, first), dim=-1) * sin


@pytest.mark.parametrize("d_k", [2, 8, 16])
def test_rope_permutation_turns_the_halves_pairing_into_the_neighbours_pairing(d_k):
    x = torch.randn(2, 3, 7, d_k, dtype=torch.float64)
    perm = rope_permutation(d_k)
    ours = RotaryEmbedding(d_k, 7, base=500.0)(x[..., perm])
    torch.testing.assert_close(ours, rotate_half_rope(x, 500.0)[..., perm])
    assert sorted(perm.tolist()) == list(range(d_k))


def test_rope_permutation_is_needed():
    x = torch.randn(1, 1, 5, 8, dtype=torch.float64)
    ours = RotaryEmbedding(8, 5)(x)
    assert not torch.allclose(ours, rotate_half_rope(x, 10000.0))


@pytest.mark.parametrize(
    "hf",
    [
        GPT2LMHeadModel(GPT2Config(vocab_size=11, n_embd=8, n_layer=2, n_head=2)),
        LlamaForCausalLM(
            LlamaConfig(
                vocab_size=11, hidden_size=8, intermediate_size=12,
                num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
            )
        ),
    ],
    ids=["gpt2", "llama"],
)  # fmt: skip
def test_weight_map_pairs_every_tensor_of_both_state_dicts(hf):
    config = config_from_hf(hf.config.to_dict())
    rows = weight_map(config, hf.config.model_type)
    ours = DecoderOnlyTransformer(config).state_dict()
    assert [book for book, _, _ in rows] == list(ours)
    theirs = {k for k, v in hf.state_dict().items() if v.is_floating_point()}
    theirs -= {k for k, _ in hf.named_buffers()}
    assert {hf_name for _, hf_name, _ in rows} == theirs
    assert {how for _, _, how in rows} <= set(HOW)


@pytest.mark.parametrize(
    "rope",
    [
        {"rope_theta": 500000.0},
        {"rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}},
        {"rope_theta": 10000.0, "rope_parameters": {"rope_theta": 500000.0}},
    ],
    ids=["transformers-4-layout", "transformers-5-layout", "both"],
)
def test_config_from_hf_reads_rope_theta_in_either_layout(rope):
    hf = dict(
        model_type="llama",
        vocab_size=11,
        hidden_size=16,
        intermediate_size=24,
        num_attention_heads=2,
        num_hidden_layers=1,
        max_position_embeddings=8,
    )
    assert config_from_hf({**hf, **rope}).rope_base == 500000.0
    assert config_from_hf(hf).rope_base == 10000.0
