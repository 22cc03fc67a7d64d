"""torch.compile traces the book's models in one graph once the checks are off,
and still runs them with the checks on. ``backend="eager"`` runs dynamo's
tracing only, no code generation, so these tests stay fast."""

import pytest
import torch

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    Transformer,
    TransformerConfig,
    generate,
    no_checks,
)

LLAMA = dict(
    vocab_size=20, d_model=16, h=4, d_ff=32, N=2, max_len=40, norm_first=True,
    norm="rms", activation="swiglu", positional="rope", n_kv_heads=2,
)  # fmt: skip
GPT = dict(vocab_size=20, d_model=16, h=4, d_ff=32, N=2, max_len=40)
SEQ2SEQ = TransformerConfig(
    src_vocab_size=11, tgt_vocab_size=13, d_model=16, h=4, d_ff=32, N=2, max_len=12
)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("config", [LLAMA, GPT], ids=["llama", "gpt"])
def test_a_decoder_compiles_to_one_graph_without_checks(config):
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**config)).eval()
    x = torch.randint(0, 20, (2, 9))
    with no_checks():
        compiled = torch.compile(model, backend="eager", fullgraph=True)
        assert torch.equal(compiled(x), model(x))


def test_the_encoder_decoder_compiles_to_one_graph_without_checks():
    model = Transformer(SEQ2SEQ).eval()
    src, tgt = torch.randint(0, 11, (2, 7)), torch.randint(0, 13, (2, 5))
    with no_checks():
        compiled = torch.compile(model, backend="eager", fullgraph=True)
        assert torch.equal(compiled(src, tgt), model(src, tgt))


def test_a_compiled_model_still_checks_its_inputs():
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**GPT)).eval()
    compiled = torch.compile(model, backend="eager")
    x = torch.randint(0, 20, (2, 9))
    assert torch.equal(compiled(x), model(x))
    with pytest.raises(ValueError, match="token ids in"):
        compiled(torch.full((2, 9), 99))


def test_generate_with_the_cache_runs_a_compiled_model_in_three_graphs():
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**LLAMA)).eval()
    prompt = torch.randint(0, 20, (1, 4))
    expected = generate(model, prompt, 20)
    model.compile(backend="eager", fullgraph=True)
    with no_checks():
        assert torch.equal(generate(model, prompt, 20), expected)
    # the prompt, the first new token, and every later one (dynamic length)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] <= 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_generate_on_a_gpu_waits_for_it_at_no_token():
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**LLAMA)).cuda().eval()
    prompt = torch.randint(0, 20, (1, 4), device="cuda")
    generate(model, prompt, 2)  # first call: kernels loaded
    with no_checks():
        torch.cuda.set_sync_debug_mode("error")
        try:
            generate(model, prompt, 20)
        finally:
            torch.cuda.set_sync_debug_mode("default")
