"""Tests of transformer.training.train."""

import pytest
import torch

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    Transformer,
    TransformerConfig,
)
from transformer.data.batches import lm_batch, seq2seq_batch
from transformer.data.tasks import make_task
from transformer.training.train import noam_lr, train, train_step


def tiny_transformer(V: int, **overrides) -> Transformer:
    sizes = dict(d_model=32, h=2, N=1, d_ff=64, dropout=0.0, max_len=16) | overrides
    return Transformer(TransformerConfig(V, V, **sizes))


def test_noam_lr_rises_linearly_then_decays_as_inverse_square_root():
    d, w = 64, 100
    assert noam_lr(w, d, w) == pytest.approx(d**-0.5 * w**-0.5)
    assert noam_lr(w // 2, d, w) == pytest.approx(noam_lr(w, d, w) / 2)
    assert noam_lr(4 * w, d, w) == pytest.approx(noam_lr(w, d, w) / 2)
    assert max(range(1, 1000), key=lambda s: noam_lr(s, d, w)) == w


@pytest.mark.slow
def test_train_brings_copy_loss_below_0_1_within_150_steps():
    torch.manual_seed(0)
    data = make_task("copy", n_symbols=5, min_len=2, max_len=4, n_train=300, n_test=50)
    history = train(
        tiny_transformer(data.vocab_size),
        data,
        steps=150,
        batch_size=32,
        lr=1e-2,
        eval_every=50,
    )
    assert history.train_loss[0] > 1.0
    assert history.eval_loss[-1] < 0.1 and history.eval_acc[-1] > 0.97


def test_train_records_every_step_and_every_evaluation():
    data = make_task("reverse", n_train=20, n_test=8)
    history = train(
        tiny_transformer(data.vocab_size), data, steps=5, batch_size=4, eval_every=2
    )
    assert history.step == [1, 2, 3, 4, 5]
    assert len(history.train_loss) == len(history.train_acc) == len(history.lr) == 5
    assert history.eval_step == [2, 4, 5] and len(history.eval_acc) == 3


def test_train_is_reproducible_with_the_same_seeds():
    data = make_task("copy", n_train=20, n_test=8)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        runs.append(
            train(tiny_transformer(data.vocab_size), data, steps=4, batch_size=4)
        )
    assert runs[0] == runs[1]


def test_train_follows_the_warmup_schedule_scaled_by_lr():
    data = make_task("copy", n_train=20, n_test=8)
    history = train(
        tiny_transformer(data.vocab_size), data, steps=4, batch_size=4, lr=2.0, warmup=3
    )
    assert history.lr == pytest.approx([2.0 * noam_lr(s, 32, 3) for s in range(1, 5)])


def test_train_runs_a_decoder_only_model_in_either_layout():
    data = make_task("reverse", n_train=20, n_test=8)
    config = DecoderOnlyConfig(
        vocab_size=data.vocab_size,
        d_model=16,
        h=2,
        N=1,
        d_ff=32,
        dropout=0.0,
        max_len=32,
    )
    for batch_fn in (None, lambda ex: lm_batch(ex, layout="aligned", prefix=True)):
        history = train(
            DecoderOnlyTransformer(config),
            data,
            steps=3,
            batch_size=4,
            batch_fn=batch_fn,
        )
        assert len(history.train_loss) == 3 and history.eval_step == [3]


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(steps=0), ValueError, "steps must be a positive int, got 0"),
        (dict(steps=2, batch_size=2.0), TypeError, "batch_size must be a positive int"),
        (dict(steps=2, lr=-1.0), ValueError, "lr must be a positive float"),
        (dict(steps=2, warmup=0), ValueError, "warmup must be a positive int"),
        (dict(steps=2, label_smoothing=1.5), ValueError, "label_smoothing must be in"),
        (
            dict(steps=2, weight_decay=-0.1),
            ValueError,
            r"weight_decay must be in \[0, 1\)",
        ),
    ],
)
def test_train_rejects_bad_arguments(kwargs, error, match):
    data = make_task("copy", n_train=20, n_test=8)
    with pytest.raises(error, match=match):
        train(tiny_transformer(data.vocab_size), data, **kwargs)


def test_train_rejects_bad_data_and_models():
    data = make_task("copy", n_train=20, n_test=8)
    with pytest.raises(TypeError, match="data must be a TaskData"):
        train(tiny_transformer(data.vocab_size), data.train, steps=2)
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        train("model", data, steps=2)


def test_train_step_sets_the_rate_clips_the_gradient_and_returns_detached_logits():
    data = make_task("copy", n_train=20, n_test=8)
    torch.manual_seed(0)
    model = tiny_transformer(data.vocab_size).eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=123.0)
    batch = seq2seq_batch(data.train[:4])
    before = [p.detach().clone() for p in model.parameters()]
    logits = train_step(model, optimizer, batch, lr=0.5, clip=1e-3)
    assert optimizer.param_groups[0]["lr"] == 0.5 and model.training
    assert not logits.requires_grad
    assert logits.shape == (*batch.targets.shape, data.vocab_size)
    # Plain SGD moves the weights by lr times the gradient, clipped to norm 1e-3.
    moved = [(b - p.detach()).flatten() for b, p in zip(before, model.parameters())]
    assert torch.cat(moved).norm().item() == pytest.approx(0.5 * 1e-3, rel=1e-3)


def test_train_step_rejects_what_is_not_an_optimizer_or_a_batch():
    data = make_task("copy", n_train=20, n_test=8)
    model = tiny_transformer(data.vocab_size)
    batch = seq2seq_batch(data.train[:4])
    with pytest.raises(TypeError, match="optimizer must be a torch.optim.Optimizer"):
        train_step(model, "adam", batch, lr=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="batch must have a logits"):
        train_step(model, optimizer, data.train[:4], lr=0.1)
    with pytest.raises(ValueError, match="lr must be a positive float"):
        train_step(model, optimizer, batch, lr=0.0)
