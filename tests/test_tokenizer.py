"""Tests of transformer.data.tokenizer."""

import pytest
import torch

from transformer.data.tokenizer import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIAL_TOKENS,
    UNK_ID,
    Tokenizer,
    pad_ids,
)

CORPUS = ["The cat sat on the mat.", "The dog sat, too."]


def test_tokenizer_reserves_the_first_ids_for_special_tokens():
    tok = Tokenizer(["a", "b"])
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert tok.id_to_token[:4] == list(SPECIAL_TOKENS)
    assert tok.token_to_id["a"] == 4 and len(tok) == 6


def test_tokenizer_from_corpus_orders_by_frequency_then_alphabet():
    tok = Tokenizer.from_corpus(CORPUS)
    assert tok.id_to_token[4:8] == ["the", ".", "sat", ","]  # 3, 2, 2, 1 times
    assert tok.id_to_token[-1] == "too"
    assert Tokenizer.from_corpus(CORPUS).id_to_token == tok.id_to_token


def test_tokenizer_from_corpus_drops_rare_words():
    tok = Tokenizer.from_corpus(CORPUS, min_count=2)
    assert tok.id_to_token[4:] == ["the", ".", "sat"]
    assert tok.encode("the cat") == [tok.token_to_id["the"], UNK_ID]


def test_tokenizer_round_trips_known_words_with_bos_and_eos():
    tok = Tokenizer.from_corpus(CORPUS)
    ids = tok.encode("The dog sat on the mat.", bos=True, eos=True)
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID and UNK_ID not in ids
    assert tok.decode(ids) == "the dog sat on the mat ."


def test_tokenizer_maps_unknown_words_to_unk_and_shows_them():
    tok = Tokenizer.from_corpus(CORPUS)
    ids = tok.encode("the zebra sat")
    assert ids[1] == UNK_ID
    assert tok.decode(ids) == "the <unk> sat"


def test_tokenizer_decode_stops_at_eos_unless_asked_not_to():
    tok = Tokenizer(["a", "b"])
    ids = torch.tensor([BOS_ID, 4, EOS_ID, 5, PAD_ID])
    assert tok.decode(ids) == "a"
    assert tok.decode(ids, stop_at_eos=False) == "a b"
    assert tok.decode(ids, skip_special=False) == "<bos> a"


def test_tokenizer_keeps_case_when_asked():
    tok = Tokenizer(["Cat", "cat"], lower=False)
    assert tok.encode("cat Cat") == [5, 4]


def test_tokenizer_encode_batch_pads_on_the_right():
    tok = Tokenizer.from_corpus(CORPUS)
    ids, lengths = tok.encode_batch(["the cat", "the dog sat"], eos=True)
    assert ids.shape == (2, 4) and ids.dtype == torch.long
    assert lengths.tolist() == [3, 4]
    assert ids[0, 2].item() == EOS_ID and ids[0, 3].item() == PAD_ID


def test_pad_ids_stacks_rows_of_different_lengths():
    assert pad_ids([[5], [6, 7, 8], []]).tolist() == [[5, 0, 0], [6, 7, 8], [0, 0, 0]]


@pytest.mark.parametrize(
    "make,error,match",
    [
        (lambda: Tokenizer(["a", "a"]), ValueError, "distinct"),
        (lambda: Tokenizer(["two words"]), ValueError, "single words"),
        (lambda: Tokenizer([3]), TypeError, "words must hold strings"),
        (lambda: Tokenizer.from_corpus("one text"), TypeError, "single str"),
        (lambda: Tokenizer.from_corpus(CORPUS, min_count=0), ValueError, "min_count"),
        (lambda: Tokenizer(["a"]).encode(["a"]), TypeError, "text must be a str"),
        (
            lambda: Tokenizer(["a"]).decode([4, 9]),
            ValueError,
            r"ids must be in \[0, V\) = \[0, 5\), got 9",
        ),
        (lambda: Tokenizer(["a"]).decode([4.0]), TypeError, "ids must hold ints"),
        (
            lambda: Tokenizer(["a"]).decode(torch.ones(2, 2, dtype=torch.long)),
            ValueError,
            r"ids must have shape \(L,\), got shape \(2, 2\)",
        ),
        (lambda: Tokenizer(["a"]).encode_batch([]), ValueError, "at least one text"),
        (lambda: pad_ids([]), ValueError, "at least one row"),
    ],
)
def test_tokenizer_rejects_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()
