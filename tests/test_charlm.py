import math

import pytest
import torch

from transformer import (
    CharCorpus,
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    bigram_bits,
    bits_per_char,
    book_chapters,
    train_lm,
    unigram_bits,
)
from transformer.training.charlm import position_bits

TEXT = ["the cat sat on the mat. " * 20, "a dog ran in the fog. " * 20]


def test_book_chapters_are_the_pages_of_this_book():
    chapters = book_chapters()
    assert "attention" in chapters and "index" in chapters
    assert chapters["attention"].startswith("---\njupytext:")


def test_corpus_holds_out_the_tail_of_every_text():
    corpus = CharCorpus.from_text(TEXT, val_fraction=0.1)
    n_val = [int(len(t) * 0.1) for t in TEXT]
    assert len(corpus.val) == sum(n_val)
    assert corpus.decode(corpus.val) == TEXT[0][-n_val[0] :] + TEXT[1][-n_val[1] :]
    assert corpus.decode(corpus.train) == TEXT[0][: -n_val[0]] + TEXT[1][: -n_val[1]]
    assert corpus.decode(corpus.encode("cat dog")) == "cat dog"


def test_corpus_batch_targets_are_the_inputs_shifted_by_one():
    corpus = CharCorpus.from_text(TEXT)
    x, y = corpus.batch("train", 4, 10, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 10)
    text = corpus.decode(corpus.train)
    for row_x, row_y in zip(x, y):
        assert corpus.decode(row_x)[1:] == corpus.decode(row_y)[:-1]
        assert corpus.decode(torch.cat([row_x, row_y[-1:]])) in text


def test_bits_per_char_of_an_untrained_model_is_near_uniform_and_training_lowers_it():
    corpus = CharCorpus.from_text(TEXT)
    config = DecoderOnlyConfig(
        vocab_size=corpus.vocab_size, d_model=16, h=2, N=1, d_ff=32, max_len=16,
        dropout=0.0, norm_first=True,
    )  # fmt: skip
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(config)
    before = bits_per_char(model, corpus.val, block_size=16)
    assert abs(before - math.log2(corpus.vocab_size)) < 1.5
    history = train_lm(
        model, corpus, steps=60, batch_size=8, block_size=16, eval_every=20
    )
    assert history.eval_step == [20, 40, 60]
    assert bits_per_char(model, corpus.val, block_size=16) < before - 1.0
    assert not model.training


def test_char_lm_rejects_bad_input():
    with pytest.raises(ValueError, match="val_fraction"):
        CharCorpus.from_text("abc" * 10, val_fraction=0.0)
    with pytest.raises(TypeError, match="text"):
        CharCorpus.from_text(3)
    corpus = CharCorpus.from_text(TEXT)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        corpus.encode("CAT")
    with pytest.raises(ValueError, match="split"):
        corpus.batch("test", 2, 4, torch.Generator())
    model = DecoderOnlyTransformer(
        DecoderOnlyConfig(vocab_size=5, d_model=8, h=2, N=1, d_ff=8)
    )
    with pytest.raises(ValueError, match="vocab_size"):
        train_lm(model, corpus, steps=1)


def test_the_wheel_lists_every_subpackage_and_the_chapters():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"][
        "setuptools"
    ]
    package = root / "code" / "transformer"
    subpackages = {
        "transformer." + ".".join(p.parent.relative_to(package).parts)
        for p in package.rglob("__init__.py")
        if p.parent != package
    }
    assert subpackages | {"transformer", "transformer.chapters"} == set(
        setuptools["packages"]
    )
    assert setuptools["package-dir"]["transformer.chapters"] == "book"


def test_unigram_bits_is_the_smoothed_character_count_by_hand():
    # train "aaab": a 3 times, b once; + 1 each: p(a) = 4 / 6, p(b) = 2 / 6
    corpus = CharCorpus("ab", torch.tensor([0, 0, 0, 1]), torch.tensor([1, 0, 1]))
    # scored on the held-out characters but the first, as bigram_bits is: a, b
    expected = -(math.log2(4 / 6) + math.log2(2 / 6)) / 2
    assert unigram_bits(corpus) == pytest.approx(expected)


def test_bigram_bits_is_the_smoothed_pair_count_by_hand():
    # "abab…" trains the pairs ab and ba only; held out: "ab"
    corpus = CharCorpus("ab", torch.tensor([0, 1, 0, 1, 0, 1, 0]), torch.tensor([0, 1]))
    # after a: ab seen 3 times, aa never; + 1 each: p(b | a) = 4 / 5
    assert bigram_bits(corpus) == pytest.approx(-math.log2(4 / 5))
    # a pair never seen still costs a finite amount: p(a | a) = 1 / 5
    unseen = CharCorpus("ab", corpus.train, torch.tensor([0, 0]))
    assert bigram_bits(unseen) == pytest.approx(-math.log2(1 / 5))


def test_bigram_bits_beats_a_uniform_guess_on_the_book():
    corpus = CharCorpus.from_text(list(book_chapters().values()), val_fraction=0.1)
    assert 0 < bigram_bits(corpus) < math.log2(corpus.vocab_size) - 1


def test_bigram_bits_rejects_what_is_not_a_corpus():
    with pytest.raises(TypeError, match="corpus must be a CharCorpus"):
        bigram_bits("abc")
    with pytest.raises(ValueError, match=r"corpus.val must be a 1-D tensor.*\(1,\)"):
        bigram_bits(CharCorpus("ab", torch.tensor([0, 1]), torch.tensor([0])))


def test_position_bits_average_to_bits_per_char_and_see_only_earlier_characters():
    corpus = CharCorpus.from_text(TEXT)
    config = DecoderOnlyConfig(
        vocab_size=corpus.vocab_size, d_model=16, h=2, N=1, d_ff=32, max_len=16,
        dropout=0.0, norm_first=True,
    )  # fmt: skip
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(config)
    bits = position_bits(model, corpus.val, 16, windows=1000)
    assert bits.shape == ((len(corpus.val) - 1) // 16, 16)
    assert math.isclose(bits.mean().item(), bits_per_char(model, corpus.val, 16),
                        rel_tol=1e-5)  # fmt: skip
    # the first windows only, the same numbers: each window is scored on its own
    first_two = position_bits(model, corpus.val, 16, windows=2)
    torch.testing.assert_close(first_two, bits[:2])
    with pytest.raises(ValueError):
        position_bits(model, corpus.val[:5], 16, windows=2)
