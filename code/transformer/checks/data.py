"""Checks of the data routines' arguments: examples, tasks, vocabularies, ids.

The examples of ``transformer.data.tasks`` are recognised by what a batch
reads from them, a ``source`` and a ``target``. Each check names the
argument, what was expected and what was received.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import torch

from .tensors import check_choice, check_positive_int


def check_examples(examples: object) -> Sequence:
    """Check that ``examples`` is a non-empty sequence of examples; return it."""
    if not isinstance(examples, Sequence) or len(examples) == 0:
        raise ValueError("examples must be a non-empty sequence of Example")
    if not all(hasattr(e, "source") and hasattr(e, "target") for e in examples):
        raise TypeError("examples must hold Example objects")
    return examples


def check_lm_batch_args(examples: object, layout: object) -> Sequence:
    """Check the examples and the layout of ``lm_batch``; return the examples."""
    check_examples(examples)
    check_choice("layout", layout, ("prompt", "aligned"))
    if layout == "aligned":
        for e in examples:
            if len(e.source) != len(e.target):
                raise ValueError(
                    "layout 'aligned' needs len(source) == len(target), "
                    f"got {len(e.source)} and {len(e.target)}"
                )
    return examples


def check_make_task_args(
    tasks: Sequence[str],
    name: object,
    *,
    n_symbols: object,
    min_len: object,
    max_len: object,
    n_train: object,
    n_test: object,
    **_: object,
) -> None:
    """Check the arguments of ``make_task``, given by name, against the ``tasks``."""
    check_choice("name", name, tuple(tasks))
    for arg, value in [
        ("n_symbols", n_symbols),
        ("min_len", min_len),
        ("max_len", max_len),
        ("n_train", n_train),
        ("n_test", n_test),
    ]:
        check_positive_int(arg, value)
    if min_len > max_len:
        raise ValueError(
            f"min_len must be <= max_len, got min_len={min_len}, max_len={max_len}"
        )
    if name == "count":
        if max_len >= n_symbols:
            raise ValueError(
                f"max_len must be < n_symbols for 'count', got {max_len} >= {n_symbols}"
            )
        possible = sum(n_symbols - n for n in range(min_len, max_len + 1))
    else:
        possible = sum(n_symbols**n for n in range(min_len, max_len + 1))
    if n_train + n_test > possible:
        raise ValueError(
            f"n_train + n_test must be <= {possible} distinct sources, "
            f"got {n_train} + {n_test}"
        )


def check_vocabulary_words(
    words: Sequence[object], split: Callable[[str], list[str]]
) -> None:
    """Check that ``words`` are distinct strings, each one word as ``split`` sees it."""
    for word in words:
        if not isinstance(word, str):
            raise TypeError(
                f"words must hold strings, got {type(word).__name__} {word!r}"
            )
        if split(word) != [word]:
            raise ValueError(
                f"words must hold single words as split() sees them, got {word!r}"
            )
    repeated = [w for w, n in Counter(words).items() if n > 1]
    if repeated:
        raise ValueError(f"words must be distinct, got repeats {repeated}")


def check_corpus_args(texts: object, min_count: object) -> None:
    """Check the corpus (strings, not one string) and ``min_count`` of a vocabulary."""
    if isinstance(texts, str):
        raise TypeError("texts must be a collection of strings, got a single str")
    check_positive_int("min_count", min_count)


def check_batch_texts(texts: object) -> None:
    """Check that ``texts`` is a non-empty sequence of strings, not one string."""
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, got a single str")
    if len(texts) == 0:
        raise ValueError("texts must hold at least one text, got an empty sequence")


def check_id_list(ids: Sequence[int] | torch.Tensor, V: int) -> list[int]:
    """Return ``ids`` as a list of ints after checking they are ids in ``[0, V)``."""
    if isinstance(ids, torch.Tensor) and ids.dim() != 1:
        raise ValueError(f"ids must have shape (L,), got shape {tuple(ids.shape)}")
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"ids must hold ints, got {type(i).__name__} {i!r}")
        if not 0 <= i < V:
            raise ValueError(f"ids must be in [0, V) = [0, {V}), got {i}")
    return ids
