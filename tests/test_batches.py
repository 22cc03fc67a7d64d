"""Tests of transformer.data.batches."""

import pytest

from transformer.data.batches import lm_batch, seq2seq_batch
from transformer.data.tasks import Example, make_task
from transformer.data.tokenizer import BOS_ID, EOS_ID, PAD_ID


def test_seq2seq_batch_pads_and_places_bos_and_eos():
    examples = [Example((4, 5), (5, 4)), Example((6, 7, 8), (8, 7, 6))]
    batch = seq2seq_batch(examples)
    assert batch.src.tolist() == [[4, 5, EOS_ID, PAD_ID], [6, 7, 8, EOS_ID]]
    assert batch.src_mask.shape == (2, 1, 1, 4)
    assert batch.src_mask[:, 0, 0].tolist() == [[True, True, True, False], [True] * 4]
    assert batch.tgt_in.tolist() == [[BOS_ID, 5, 4, PAD_ID], [BOS_ID, 8, 7, 6]]
    assert batch.targets.tolist() == [[5, 4, EOS_ID, PAD_ID], [8, 7, 6, EOS_ID]]
    data = make_task("reverse", min_len=2, max_len=5, n_train=20, n_test=5)
    assert seq2seq_batch(data.train).src.shape == (20, 6)  # longest source + EOS


def test_lm_batch_prompt_layout_trains_only_on_the_answer():
    batch = lm_batch([Example((4, 5), (5, 4)), Example((6,), (6,))])
    assert batch.x.tolist() == [
        [BOS_ID, 4, 5, EOS_ID, 5, 4],
        [BOS_ID, 6, EOS_ID, 6, PAD_ID, PAD_ID],
    ]
    assert batch.targets.tolist() == [
        [PAD_ID, PAD_ID, PAD_ID, 5, 4, EOS_ID],
        [PAD_ID, PAD_ID, 6, EOS_ID, PAD_ID, PAD_ID],
    ]
    assert batch.mask is None


def test_lm_batch_aligned_layout_pairs_each_position_with_its_target():
    batch = lm_batch(
        [Example((4, 5, 6), (6, 5, 4)), Example((7,), (7,))], layout="aligned"
    )
    assert batch.x.tolist() == [[4, 5, 6], [7, PAD_ID, PAD_ID]]
    assert batch.targets.tolist() == [[6, 5, 4], [7, PAD_ID, PAD_ID]]


def test_lm_batch_prefix_mask_shows_the_whole_prompt():
    batch = lm_batch([Example((4, 5), (5, 4))], prefix=True)
    assert batch.mask.shape == (1, 1, 6, 6)
    assert (
        batch.mask[0, 0, 0].tolist() == [True] * 4 + [False] * 2
    )  # BOS sees BOS 4 5 EOS
    assert batch.mask[0, 0, 4].tolist() == [True] * 5 + [False]


@pytest.mark.parametrize(
    "make,error,match",
    [
        (lambda: seq2seq_batch([]), ValueError, "non-empty"),
        (lambda: seq2seq_batch([((4,), (4,))]), TypeError, "Example"),
        (
            lambda: lm_batch([Example((4,), (4,))], layout="side"),
            ValueError,
            "layout must be",
        ),
        (
            lambda: lm_batch([Example((4, 5), (4,))], layout="aligned"),
            ValueError,
            r"len\(source\) == len\(target\), got 2 and 1",
        ),
    ],
)
def test_batches_reject_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()
