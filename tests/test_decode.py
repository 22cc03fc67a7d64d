"""Tests of transformer.inference.decode."""

import pytest
import torch
import torch.nn.functional as F

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    Transformer,
    TransformerConfig,
)
from transformer.data.tasks import make_task
from transformer.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from transformer.inference.decode import (
    exact_match,
    extend,
    greedy_decode,
    greedy_generate,
    predict,
    strip_eos,
)
from transformer.inference.generate import generate
from transformer.training.train import train

V = 12


class Scripted(Transformer):
    """An encoder-decoder that writes a fixed script per row, whatever its source."""

    def __init__(self, scripts):
        super().__init__(
            TransformerConfig(V, V, d_model=8, h=2, N=1, d_ff=8, max_len=32)
        )
        self.scripts = scripts
        self.calls = 0

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        self.calls += 1
        B, L = tgt.shape
        logits = torch.zeros(B, L, V)
        for b, script in enumerate(self.scripts):
            logits[b, -1, script[min(L, len(script)) - 1]] = 1.0
        return logits


class Counting(DecoderOnlyTransformer):
    """A decoder-only model whose next token is always its last token plus one.

    After the largest id it writes EOS. It reads the position it is asked
    about, so a batch decoded at the wrong positions gives wrong numbers.
    """

    def __init__(self):
        super().__init__(
            DecoderOnlyConfig(vocab_size=V, d_model=8, h=2, N=1, d_ff=8, max_len=32)
        )

    def forward(self, x, mask=None):
        following = (x + 1).masked_fill(x == V - 1, EOS_ID)  # (B, L)
        return F.one_hot(following, V).float()  # (B, L, V)


def random_models():
    torch.manual_seed(0)
    sizes = dict(d_model=16, h=2, N=1, d_ff=32, dropout=0.0, max_len=32)
    return Transformer(TransformerConfig(V, V, **sizes)), DecoderOnlyTransformer(
        DecoderOnlyConfig(vocab_size=V, **sizes)
    )


def test_greedy_decode_stops_each_row_at_its_eos_and_pads_after_it():
    model = Scripted([[5, EOS_ID], [6, 7, 8, EOS_ID]])
    out = greedy_decode(model, torch.full((2, 3), 4), max_len=10)
    assert out.tolist() == [[5, EOS_ID, PAD_ID, PAD_ID], [6, 7, 8, EOS_ID]]
    assert model.calls == 4  # stopped once every row had its EOS


def test_greedy_decode_stops_at_max_len_without_eos():
    out = greedy_decode(Scripted([[5, 6, 7, 8, 9]]), torch.full((1, 2), 4), max_len=3)
    assert out.tolist() == [[5, 6, 7]]


def test_greedy_decode_of_a_mixed_length_batch_equals_decoding_each_row_alone():
    model, _ = random_models()
    rows = [[4, 5, 6, 7, 8, EOS_ID], [9, EOS_ID], [10, 11, 4, EOS_ID]]
    src = torch.tensor([r + [PAD_ID] * (6 - len(r)) for r in rows])
    together = greedy_decode(model, src, [len(r) for r in rows], max_len=6)
    for b, row in enumerate(rows):
        alone = greedy_decode(model, torch.tensor([row]), max_len=6)
        assert strip_eos(together[b]) == strip_eos(alone[0])
        assert together[b, : alone.shape[1]].tolist() == alone[0].tolist()


def test_greedy_generate_reads_each_prompt_at_its_own_end():
    prompt = torch.tensor([[BOS_ID, 4, 5], [BOS_ID, 8, PAD_ID]])
    out = greedy_generate(Counting(), prompt, [3, 2], max_new_tokens=10)
    assert out.tolist() == [
        [6, 7, 8, 9, 10, 11, EOS_ID],
        [9, 10, 11, EOS_ID, PAD_ID, PAD_ID, PAD_ID],
    ]


def test_greedy_generate_stops_at_max_new_tokens():
    out = greedy_generate(Counting(), torch.tensor([[4]]), max_new_tokens=2)
    assert out.tolist() == [[5, 6]]


@pytest.mark.parametrize("prefix", [False, True])
def test_greedy_generate_of_a_mixed_length_batch_equals_each_row_alone(prefix):
    _, model = random_models()
    rows = [[BOS_ID, 4, 5, 6, EOS_ID], [BOS_ID, 7, EOS_ID]]
    prompt = torch.tensor([r + [PAD_ID] * (5 - len(r)) for r in rows])
    together = greedy_generate(model, prompt, [5, 3], max_new_tokens=6, prefix=prefix)
    for b, row in enumerate(rows):
        alone = greedy_generate(
            model, torch.tensor([row]), max_new_tokens=6, prefix=prefix
        )
        assert together[b, : alone.shape[1]].tolist() == alone[0].tolist()


def test_decoding_leaves_the_model_in_the_mode_it_found():
    model, lm = random_models()
    model.train()
    greedy_decode(model, torch.tensor([[4, EOS_ID]]), max_len=2)
    lm.eval()
    greedy_generate(lm, torch.tensor([[4]]), max_new_tokens=2)
    assert model.training and not lm.training


def test_strip_eos_cuts_at_the_first_eos():
    assert strip_eos(torch.tensor([5, 6, EOS_ID, 7, EOS_ID])) == (5, 6)
    assert strip_eos([5, 6]) is None


@pytest.mark.slow
def test_greedy_decode_of_a_trained_model_reproduces_held_out_targets():
    torch.manual_seed(0)
    data = make_task("copy", n_symbols=5, min_len=2, max_len=4, n_train=300, n_test=40)
    model = Transformer(
        TransformerConfig(
            data.vocab_size,
            data.vocab_size,
            d_model=32,
            h=2,
            N=1,
            d_ff=64,
            dropout=0.0,
            max_len=16,
        )
    )
    train(model, data, steps=200, batch_size=32, lr=1e-2, eval_every=100)
    answers = predict(model, data.test)
    assert answers[:5] == [e.target for e in data.test[:5]]
    assert exact_match(model, data.test) == 1.0


def test_decoding_rejects_bad_input():
    model, lm = random_models()
    src = torch.tensor([[4, 5, EOS_ID]])
    with pytest.raises(
        TypeError, match="model must be a Transformer, got DecoderOnlyTransformer"
    ):
        greedy_decode(lm, src, max_len=3)
    with pytest.raises(TypeError, match="src must hold integer token ids"):
        greedy_decode(model, src.float(), max_len=3)
    with pytest.raises(
        ValueError, match=r"src_lengths must have shape \(B,\) = \(1,\)"
    ):
        greedy_decode(model, src, [3, 2], max_len=3)
    with pytest.raises(
        ValueError, match=r"src_lengths .* values in \[1, 3\], got \[4\]"
    ):
        greedy_decode(model, src, [4], max_len=3)
    with pytest.raises(ValueError, match="max_len must be a positive int, got 0"):
        greedy_decode(model, src, max_len=0)
    with pytest.raises(TypeError, match="model must be a DecoderOnlyTransformer"):
        greedy_generate(model, src, max_new_tokens=2)
    with pytest.raises(ValueError, match="must be <= max_len = 32"):
        greedy_generate(lm, src, max_new_tokens=31)
    with pytest.raises(
        TypeError, match="model must be a Transformer or DecoderOnlyTransformer"
    ):
        predict("model", [])


class TorchSpy:
    """Stands in for ``torch`` in a module; records the tensor factories it calls."""

    FACTORIES = {"full", "zeros", "ones", "arange", "tensor", "as_tensor", "empty"}

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        attr = getattr(torch, name)
        if name not in self.FACTORIES:
            return attr

        def spy(*args, **kwargs):
            self.calls.append((name, kwargs.get("device")))
            return attr(*args, **kwargs)

        return spy


def test_decoding_makes_every_tensor_on_the_models_device(monkeypatch):
    import transformer.checks.generation as checks
    import transformer.inference.decode as decode

    model, lm = random_models()
    spy = TorchSpy()
    monkeypatch.setattr(decode, "torch", spy)
    monkeypatch.setattr(checks, "torch", spy)  # the checks make the lengths
    src = torch.tensor([[4, 5, EOS_ID], [6, EOS_ID, PAD_ID]])
    decode.greedy_decode(model, src, [3, 2], max_len=4)
    decode.greedy_decode(model, src, max_len=4)
    decode.greedy_generate(lm, src, [3, 2], max_new_tokens=3, prefix=True)
    decode.predict(model, make_task("copy", n_symbols=5, n_train=4, n_test=4).test)
    assert {name for name, _ in spy.calls} >= {"full", "zeros", "arange", "as_tensor"}
    assert all(device == torch.device("cpu") for _, device in spy.calls), spy.calls


def test_decoding_rejects_ids_on_another_device_than_the_model():
    model, lm = random_models()
    ids = torch.ones(1, 3, dtype=torch.long, device="meta")
    with pytest.raises(
        ValueError,
        match="src must be on the device of the model's weights, cpu, got meta",
    ):
        greedy_decode(model, ids, max_len=2)
    with pytest.raises(
        ValueError,
        match="prompt must be on the device of the model's weights, cpu, got meta",
    ):
        greedy_generate(lm, ids, max_new_tokens=2)


@pytest.mark.parametrize("training", [True, False])
def test_decoding_puts_the_model_back_in_its_mode(training):
    model, lm = random_models()
    model.train(training), lm.train(training)
    src = torch.tensor([[4, 5, EOS_ID]])
    greedy_decode(model, src, max_len=3)
    greedy_generate(lm, src, max_new_tokens=3)
    assert model.training is training and lm.training is training
    assert all(m.training is training for m in model.modules())


def test_decoding_puts_the_model_back_in_its_mode_after_an_error():
    model = Scripted([[5, 6]]).train()

    def failing_decode(*args, **kwargs):
        assert not model.training  # decoding runs in eval mode
        raise RuntimeError("interrupted")

    model.decode = failing_decode
    with pytest.raises(RuntimeError, match="interrupted"):
        greedy_decode(model, torch.full((1, 2), 4), max_len=3)
    assert model.training


def test_decoding_checks_every_length_up_front_and_names_it():
    model, lm = random_models()  # both have max_len = 32
    calls = []
    model.encode = lambda *a: calls.append("encode")
    src = torch.tensor([[4, 5, EOS_ID]])
    with pytest.raises(
        ValueError, match=r"max_len must be <= the model's config.max_len = 32.*got 33"
    ):
        greedy_decode(model, src, max_len=33)
    with pytest.raises(TypeError, match="max_len must be a positive int, got float"):
        greedy_decode(model, src, max_len=3.0)
    with pytest.raises(
        ValueError, match=r"src must have shape \(B, L\) with L <= max_len = 32"
    ):
        greedy_decode(model, torch.full((1, 33), 4), max_len=3)
    with pytest.raises(
        TypeError, match="src_lengths must hold integers, got dtype torch.float32"
    ):
        greedy_decode(model, src, torch.tensor([2.0]), max_len=3)
    assert calls == []  # every one was caught before the model ran
    with pytest.raises(TypeError, match="max_new_tokens must be a positive int"):
        greedy_generate(lm, src, max_new_tokens=None)
    with pytest.raises(
        ValueError, match=r"prompt must have shape \(B, L\) with L <= max_len = 32"
    ):
        greedy_generate(lm, torch.full((1, 33), 4), max_new_tokens=1)
    with pytest.raises(
        ValueError, match=r"prompt_lengths must have shape \(B,\) = \(1,\)"
    ):
        greedy_generate(lm, src, [1, 2], max_new_tokens=1)
    # The longest decode the model allows works.
    assert greedy_decode(model.__class__(model.config), src, max_len=32).shape[1] <= 32


def test_predict_caps_the_answer_length_at_what_the_model_reads():
    sizes = dict(d_model=16, h=2, N=1, d_ff=32, max_len=8)
    short = Transformer(TransformerConfig(V, V, **sizes))
    examples = make_task(
        "copy", n_symbols=5, min_len=5, max_len=5, n_train=4, n_test=4
    ).test
    assert len(predict(short, examples)) == 4


def test_extend_appends_the_chosen_tokens_and_stops_rows_at_eos_when_asked():
    script = [[5, EOS_ID], [EOS_ID, 7], [6, 8]]  # the next token of each row, by step

    def next_logits(tokens):
        return F.one_hot(torch.tensor(script[tokens.shape[1] - 1]), V).float()

    start = torch.full((2, 1), BOS_ID)
    assert extend(start, next_logits, 3).tolist() == [
        [BOS_ID, 5, EOS_ID],
        [BOS_ID, EOS_ID, PAD_ID],
    ]
    assert extend(start, next_logits, 3, stop_at_eos=False).tolist() == [
        [BOS_ID, 5, EOS_ID, 6],
        [BOS_ID, EOS_ID, 7, 8],
    ]
    least_likely = extend(start, next_logits, 1, choose=lambda z: z.argmin(-1, True))
    assert least_likely[:, 1].tolist() == [0, 0]


def test_greedy_generate_and_generate_write_the_same_tokens_up_to_eos():
    _, lm = random_models()
    prompt = torch.tensor([[BOS_ID, 4, 5], [BOS_ID, 6, 7], [BOS_ID, 9, 9]])
    greedy = greedy_generate(lm, prompt, max_new_tokens=8)
    written = generate(lm, prompt, 8)[:, 3:]
    for g, w in zip(greedy.tolist(), written.tolist()):
        n = g.index(EOS_ID) + 1 if EOS_ID in g else len(g)
        assert g[:n] == w[:n]
