"""Tests of transformer.data.tasks."""

import pytest
import torch

from transformer.data.tasks import TARGETS, make_task


def symbols(data, ids):
    """The numbers that a task's ids spell."""
    return [int(data.tokenizer.id_to_token[i]) for i in ids]


def test_make_task_is_deterministic_and_ignores_the_global_seed():
    torch.manual_seed(1)
    first = make_task("reverse", n_train=50, n_test=10, seed=3)
    torch.manual_seed(2)
    torch.rand(7)
    second = make_task("reverse", n_train=50, n_test=10, seed=3)
    assert (first.train, first.test) == (second.train, second.test)
    assert make_task("reverse", n_train=50, n_test=10, seed=4).train != first.train


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_make_task_targets_follow_the_task(name):
    data = make_task(name, n_symbols=20, min_len=2, max_len=6, n_train=40, n_test=10)
    rule = {
        "copy": lambda s: s,
        "reverse": lambda s: s[::-1],
        "sort": sorted,
        "count": lambda s: [x + 1 for x in s],
    }[name]
    for e in data.train + data.test:
        assert symbols(data, e.target) == list(rule(symbols(data, e.source)))


def test_make_task_count_sources_are_runs_of_consecutive_numbers():
    data = make_task("count", n_symbols=20, min_len=4, max_len=4, n_train=8, n_test=4)
    for e in data.train:
        s = symbols(data, e.source)
        assert s == list(range(s[0], s[0] + 4)) and s[-1] + 1 < 20


def test_make_task_splits_are_disjoint_and_have_the_asked_sizes():
    data = make_task("copy", n_symbols=3, min_len=1, max_len=3, n_train=30, n_test=9)
    assert len(data.train) == 30 and len(data.test) == 9
    sources = [e.source for e in data.train + data.test]
    assert len(set(sources)) == 39  # all 3 + 9 + 27 possible sources, each once


def test_make_task_lengths_stay_in_range_and_use_only_symbols():
    data = make_task("sort", n_symbols=5, min_len=2, max_len=4, n_train=100, n_test=20)
    lengths = {len(e.source) for e in data.train}
    assert lengths == {2, 3, 4}
    ids = {i for e in data.train for i in e.source + e.target}
    assert ids <= set(range(4, 9)) and data.vocab_size == 9


@pytest.mark.parametrize(
    "make,error,match",
    [
        (lambda: make_task("shuffle"), ValueError, "name must be"),
        (
            lambda: make_task("copy", n_symbols=0),
            ValueError,
            "n_symbols must be a positive int",
        ),
        (
            lambda: make_task("copy", max_len=2.5),
            TypeError,
            "max_len must be a positive int",
        ),
        (
            lambda: make_task("copy", min_len=5, max_len=3),
            ValueError,
            "min_len must be <= max_len",
        ),
        (
            lambda: make_task("count", n_symbols=8, max_len=8),
            ValueError,
            "max_len must be < n_symbols",
        ),
        (
            lambda: make_task(
                "copy", n_symbols=2, min_len=1, max_len=2, n_train=5, n_test=2
            ),
            ValueError,
            "n_train \\+ n_test must be <= 6",
        ),
    ],
)
def test_make_task_rejects_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()
