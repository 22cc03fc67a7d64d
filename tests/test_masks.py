"""Tests of transformer.parts.masks."""

import pytest
import torch

from transformer import causal_mask, padding_mask
from transformer.parts.masks import prefix_lm_mask


def test_causal_mask_blocks_future_positions():
    m = causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert bool(m[i, j]) == (j <= i)


def test_causal_mask_rejects_non_positive_or_non_int_length():
    with pytest.raises(ValueError, match="L must be a positive int, got 0"):
        causal_mask(0)
    with pytest.raises(TypeError, match="L must be a positive int, got float"):
        causal_mask(3.0)


def test_padding_mask_marks_real_tokens_true():
    m = padding_mask([3, 1, 4])
    assert m.shape == (3, 1, 1, 4) and m.dtype == torch.bool
    assert m[:, 0, 0].tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [True, True, True, True],
    ]


def test_padding_mask_accepts_tensor_and_explicit_length():
    m = padding_mask(torch.tensor([2, 0]), S=3)
    assert m[:, 0, 0].tolist() == [[True, True, False], [False, False, False]]


def test_padding_mask_takes_lengths_as_a_list_a_tuple_or_int32():
    expected = padding_mask([2, 1], S=3)
    assert torch.equal(padding_mask((2, 1), S=3), expected)
    assert torch.equal(
        padding_mask(torch.tensor([2, 1], dtype=torch.int32), 3), expected
    )


def test_padding_and_causal_masks_combine_by_broadcasting():
    both = causal_mask(4) & padding_mask([4, 2])
    assert both.shape == (2, 1, 4, 4)
    assert both[1, 0, 3].tolist() == [True, True, False, False]
    assert both[0, 0, 1].tolist() == [True, True, False, False]


@pytest.mark.parametrize(
    "lengths,S,error,match",
    [
        ([2.0, 1.0], None, TypeError, "lengths must be a sequence of ints"),
        (3, None, TypeError, "lengths must be a sequence of ints, got 3"),
        (torch.tensor([1.0]), None, TypeError, "lengths must hold integers"),
        ([], None, ValueError, r"lengths must have shape \(B,\)"),
        (torch.ones(2, 2, dtype=torch.long), None, ValueError, r"got \(2, 2\)"),
        ([1, -1], None, ValueError, "lengths must be >= 0"),
        ([5, 2], 4, ValueError, "lengths must be <= S = 4"),
        ([1], 0, ValueError, "S must be a positive int"),
    ],
)
def test_padding_mask_rejects_bad_lengths(lengths, S, error, match):
    with pytest.raises(error, match=match):
        padding_mask(lengths, S)


def test_prefix_lm_mask_is_prefix_or_past():
    mask = prefix_lm_mask([2, 0], 4)
    assert mask.shape == (2, 1, 4, 4) and mask.dtype == torch.bool
    for b, p in enumerate([2, 0]):
        for i in range(4):
            assert mask[b, 0, i].tolist() == [j < p or j <= i for j in range(4)]


def test_prefix_lm_mask_rejects_prefix_longer_than_sequence():
    with pytest.raises(ValueError, match="lengths must be <= S = 4"):
        prefix_lm_mask([5], 4)
