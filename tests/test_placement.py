"""Every routine that takes a model makes its tensors on the model's device and
in its dtype: ``model.to(device)`` is all a reader changes. On a machine
without a GPU the other device is PyTorch's ``meta`` device (shapes only) or
the model's dtype is float64; with one, the ``device`` fixture adds CUDA."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    KVCache,
    generate,
    no_checks,
)
from transformer.data.batches import lm_batch
from transformer.data.placement import device_of, dtype_of
from transformer.data.tasks import make_task
from transformer.training.charlm import CharCorpus, bits_per_char, train_lm
from transformer.training.metrics import evaluate, position_accuracy
from transformer.training.train import train, train_step

LLAMA = dict(
    d_model=16, h=4, d_ff=32, N=1, max_len=24, norm_first=True, norm="rms",
    activation="swiglu", positional="rope", n_kv_heads=2,
)  # fmt: skip
TEXT = "the cat sat on the mat, and the dog sat on the log. " * 4


def llama(vocab_size: int, device, dtype=torch.float64) -> DecoderOnlyTransformer:
    config = DecoderOnlyConfig(vocab_size=vocab_size, **LLAMA)
    return DecoderOnlyTransformer(config).to(device=device, dtype=dtype)


def test_device_of_and_dtype_of_read_the_weights():
    model = nn.Linear(2, 2).double()
    assert device_of(model) == torch.device("cpu") and dtype_of(model) == torch.float64
    assert device_of(nn.ReLU()) == torch.device("cpu")
    assert dtype_of(nn.ReLU()) == torch.float32


def test_train_lm_and_bits_per_char_run_where_the_model_is(device):
    corpus = CharCorpus.from_text(TEXT)
    model = llama(corpus.vocab_size, device)
    history = train_lm(
        model, corpus, steps=2, batch_size=2, block_size=8, eval_every=2, warmup=1
    )
    assert len(history.train_loss) == 2 and len(history.eval_loss) == 1
    assert bits_per_char(model, corpus.val, 8) > 0
    assert all(p.dtype == torch.float64 for p in model.parameters())


def test_train_evaluate_and_generate_run_where_the_model_is(device):
    data = make_task("copy", n_symbols=5, min_len=2, max_len=4, n_train=20, n_test=8)
    model = llama(data.vocab_size, device)
    history = train(model, data, steps=2, batch_size=4, eval_every=2, eval_size=4)
    assert len(history.eval_acc) == 1
    batch = lm_batch(data.test[:4])
    assert evaluate(model, batch)[0] > 0
    assert position_accuracy(model, batch).device.type == device.type
    # (1, 7) from a prompt on the CPU
    cached = generate(model, torch.zeros(1, 3, dtype=torch.long), 4)
    assert cached.device.type == device.type
    uncached = generate(model, torch.zeros(1, 3, dtype=torch.long), 4, use_cache=False)
    assert torch.equal(cached, uncached)


def test_the_kv_cache_holds_keys_in_the_models_dtype_and_device(device):
    model = llama(10, device).eval()
    cache = KVCache(model)
    cache(torch.zeros(2, 3, dtype=torch.long, device=device))
    key = cache[0].key
    assert key.dtype == torch.float64 and key.device.type == device.type
    assert key.shape == (2, 2, 3, 4) and cache[0].keys.shape == (2, 2, 24, 4)


def test_generate_and_train_step_make_their_tensors_on_another_device():
    # the meta device holds shapes only: a tensor made on the CPU would not mix
    model = llama(10, "meta", torch.float32)
    with no_checks():
        out = generate(model, torch.zeros(1, 3, dtype=torch.long), 4)
        assert out.device.type == "meta" and out.shape == (1, 7)
        data = make_task("copy", n_symbols=5, n_train=4, n_test=2)
        optimizer = torch.optim.AdamW(model.parameters())

        def loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
            return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

        batch = lm_batch(data.train)
        logits = train_step(model, optimizer, batch, lr=1e-3, loss_fn=loss)
    assert logits.device.type == "meta"


@pytest.mark.parametrize("batch", [lm_batch, lambda e: lm_batch(e, prefix=True)])
def test_a_batch_moves_with_every_tensor(batch):
    data = make_task("copy", n_train=4, n_test=2)
    moved = batch(data.train).to("meta")
    tensors = [moved.x, moved.targets] + ([] if moved.mask is None else [moved.mask])
    assert all(t.device.type == "meta" for t in tensors)
