import json
import subprocess
import sys

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    from_hf,
    generate,
    load_pretrained,
    to_hf,
)

GPT2_SIZES = [
    dict(n_embd=32, n_layer=2, n_head=4, n_positions=24),
    dict(n_embd=48, n_layer=3, n_head=6, n_positions=40, n_inner=80,
         activation_function="gelu", tie_word_embeddings=False),
]  # fmt: skip
LLAMA_SIZES = [
    dict(num_key_value_heads=1, tie_word_embeddings=True),
    dict(num_key_value_heads=2, tie_word_embeddings=False),
    dict(num_key_value_heads=2, rope_theta=500000.0, rms_norm_eps=1e-6),
    dict(num_key_value_heads=4, rope_theta=1234.0, rms_norm_eps=1e-3),
]
NO_TOKENS = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None)


def gpt2(**sizes) -> GPT2LMHeadModel:
    config = GPT2Config(
        vocab_size=61, attn_implementation="eager", **NO_TOKENS, **sizes
    )
    return GPT2LMHeadModel(config).eval()


def llama(**sizes) -> LlamaForCausalLM:
    config = LlamaConfig(
        vocab_size=61, hidden_size=32, intermediate_size=56, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=48,
        attn_implementation="eager", **NO_TOKENS, **sizes,
    )  # fmt: skip
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # HF initialises the norms to ones: make them matter
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


HF_MODELS = [lambda s=s: gpt2(**s) for s in GPT2_SIZES]
HF_MODELS += [lambda s=s: llama(**s) for s in LLAMA_SIZES]
IDS = ["gpt2-tied", "gpt2-untied-gelu", "llama-mqa-tied", "llama-gqa-untied"]
IDS += ["llama-rope-base", "llama-mha-eps"]


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("make", HF_MODELS, ids=IDS)
def test_from_hf_logits_equal_hugging_face(make):
    hf = make()
    ours = from_hf(hf)
    x = torch.randint(0, 61, (2, 17))
    with torch.no_grad():
        expected, got = hf(x).logits, ours(x)
    assert relative_error(got, expected) < 1e-4
    assert not ours.training


@pytest.mark.parametrize("make", HF_MODELS, ids=IDS)
def test_from_hf_reads_every_setting_of_the_config(make):
    hf = make()
    c, h = from_hf(hf).config, hf.config
    assert c.share_embeddings == h.tie_word_embeddings
    if c.positional == "rope":
        assert c.n_kv_heads == h.num_key_value_heads
        assert c.norm_eps == h.rms_norm_eps
        assert c.rope_base == h.rope_parameters["rope_theta"]
    else:
        assert c.norm_eps == h.layer_norm_epsilon


@pytest.mark.parametrize("make", HF_MODELS, ids=IDS)
def test_from_hf_builds_a_model_of_its_own_that_trains(make):
    hf = make()
    ours = from_hf(hf)
    theirs = {t.data_ptr() for t in hf.state_dict().values()}
    for name, p in ours.named_parameters():
        assert p.device.type == "cpu" and p.dtype == torch.float32, name
        assert p.requires_grad and p.is_contiguous(), name
        assert p.data_ptr() not in theirs, name
    assert all(not b.is_meta for b in ours.buffers())
    tied = ours.out_proj.weight is ours.embed.weight
    assert tied == ours.config.share_embeddings
    ours(torch.randint(0, 61, (1, 6))).sum().backward()
    assert all(p.grad is not None for p in ours.parameters())


def test_from_hf_gives_float32_for_a_half_precision_model():
    hf = llama(num_key_value_heads=2).to(torch.bfloat16)
    ours = from_hf(hf)
    assert {p.dtype for p in ours.parameters()} == {torch.float32}
    assert ours.rope.cos.dtype == torch.float64


@pytest.mark.parametrize("make", HF_MODELS, ids=IDS)
def test_greedy_generate_with_the_cache_gives_hugging_face_tokens(make):
    hf = make()
    ours = from_hf(hf)
    prompt = torch.randint(0, 61, (2, 5))
    expected = hf.generate(
        prompt, max_new_tokens=12, do_sample=False, min_new_tokens=12
    )
    got = generate(ours, prompt, 12, use_cache=True)
    assert torch.equal(got, expected)


@pytest.mark.parametrize("make", HF_MODELS, ids=IDS)
def test_hf_to_ours_to_hf_gives_every_tensor_bit_equal(make):
    hf = make()
    back = to_hf(from_hf(hf))
    assert type(back) is type(hf)
    before, after = hf.state_dict(), back.state_dict()
    assert set(before) == set(after)
    for name, tensor in before.items():
        assert torch.equal(after[name], tensor), name


@pytest.mark.parametrize("make", [HF_MODELS[0], HF_MODELS[3]], ids=IDS[0:4:3])
def test_load_pretrained_reads_a_save_pretrained_folder(make, tmp_path):
    hf = make()
    hf.save_pretrained(tmp_path)
    assert list(tmp_path.glob("*.safetensors"))
    ours = load_pretrained(tmp_path)
    x = torch.randint(0, 61, (1, 9))
    with torch.no_grad():
        assert relative_error(ours(x), hf(x).logits) < 1e-4


def test_load_pretrained_needs_no_transformers(tmp_path):
    gpt2(**GPT2_SIZES[0]).save_pretrained(tmp_path)
    # A fresh interpreter in which importing transformers fails.
    script = (
        "import sys; sys.modules['transformers'] = None\n"
        "import transformer\n"
        f"model = transformer.load_pretrained({str(tmp_path)!r})\n"
        "assert 'transformers' not in [m for m in sys.modules if sys.modules[m]]\n"
        "print(type(model).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "DecoderOnlyTransformer"


LLAMA_STYLE = dict(
    vocab_size=29, d_model=24, h=4, n_kv_heads=2, N=2, d_ff=40, max_len=32,
    dropout=0.0, norm_first=True, norm="rms", activation="swiglu", positional="rope",
)  # fmt: skip


def test_to_hf_takes_a_model_trained_in_the_book():
    config = DecoderOnlyConfig(**LLAMA_STYLE, scale_embeddings=False, output_bias=False)
    ours = DecoderOnlyTransformer(config).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    hf = to_hf(ours)
    x = torch.randint(0, 29, (2, 11))
    with torch.no_grad():
        assert relative_error(ours(x), hf(x).logits) < 1e-4


def test_to_hf_names_the_options_a_family_needs():
    config = DecoderOnlyConfig(**LLAMA_STYLE)
    with pytest.raises(ValueError, match=r"LLaMA.*scale_embeddings=False.*output_bias"):
        to_hf(DecoderOnlyTransformer(config))
    paper = DecoderOnlyConfig(vocab_size=29, d_model=24, h=4, N=1, d_ff=40)
    with pytest.raises(ValueError, match=r"positional='learned'"):
        to_hf(DecoderOnlyTransformer(paper))
    with pytest.raises(TypeError, match="DecoderOnlyTransformer"):
        to_hf(torch.nn.Linear(2, 2))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: llama(rope_scaling={"rope_type": "linear", "factor": 2.0}), "rope"),
        (lambda: llama(head_dim=16), "head_dim"),
        (lambda: llama(attention_bias=True), "attention_bias"),
        (lambda: llama(mlp_bias=True), "mlp_bias"),
        (lambda: llama(hidden_act="gelu"), "hidden_act"),
        (lambda: gpt2(n_embd=32, n_head=4, activation_function="silu"), "silu"),
        (lambda: gpt2(n_embd=32, n_head=4, scale_attn_weights=False), "scale_attn"),
    ],
)
def test_from_hf_refuses_what_the_book_model_cannot_express(make, match):
    with pytest.raises(ValueError, match=match):
        from_hf(make())


def test_converted_model_refuses_positions_past_max_len():
    ours = from_hf(gpt2(**GPT2_SIZES[0]))
    with pytest.raises(ValueError, match="max_len = 24"):
        ours(torch.zeros(1, 25, dtype=torch.long))


def test_from_hf_refuses_other_models_and_other_model_types(tmp_path):
    with pytest.raises(TypeError, match="GPT2LMHeadModel or LlamaForCausalLM"):
        from_hf(torch.nn.Linear(2, 2))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match="model_type must be 'gpt2' or 'llama'"):
        load_pretrained(tmp_path)
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_pretrained(tmp_path / "nowhere")


def test_from_hf_refuses_a_state_with_tensors_it_does_not_understand():
    from transformer.tools.huggingface import from_hf_state

    hf = gpt2(**GPT2_SIZES[0])
    state = {**hf.state_dict(), "transformer.h.0.attn.q_norm.weight": torch.ones(8)}
    with pytest.raises(ValueError, match="q_norm"):
        from_hf_state(hf.config.to_dict(), state)


def test_from_hf_refusal_of_rope_scaling_names_rope_parameters_and_its_theta():
    # transformers 5 keeps rope_theta inside rope_parameters; a scaled LLaMA 3
    # config must be refused with its own base, 500000, in the message.
    scaled = {"rope_type": "linear", "factor": 2.0, "rope_theta": 500000.0}
    model = llama(num_key_value_heads=2, rope_parameters=scaled)
    assert model.config.rope_parameters["rope_theta"] == 500000.0
    with pytest.raises(ValueError, match=r"rope_parameters=.*'rope_theta': 500000\.0"):
        from_hf(model)
