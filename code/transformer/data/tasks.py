"""Toy sequence tasks, generated in code: copy, reverse, sort and count.

Each task turns a source sequence of symbols into a target sequence. Symbols
are the numbers ``0 .. n_symbols - 1``, written as words of a
:class:`~transformer.data.tokenizer.Tokenizer`, so the ids of the special tokens
(PAD, BOS, EOS, UNK) are the same as everywhere else and any example can be
printed as text. Generation uses its own ``torch.Generator``: the same seed
gives the same examples, whatever else has used the global random state.

:mod:`transformer.data.batches` turns the examples into the tensors a model
trains on.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..checks.data import check_make_task_args
from .tokenizer import Tokenizer

TARGETS = {
    "copy": lambda s: s,
    "reverse": lambda s: s[::-1],
    "sort": lambda s: tuple(sorted(s)),
    "count": lambda s: tuple(x + 1 for x in s),  # the next integer after each one
}
"""How each task, by name, turns a source into its target."""


@dataclass(frozen=True)
class Example:
    """One source sequence and its target, as token ids (no BOS, EOS or PAD)."""

    source: tuple[int, ...]
    target: tuple[int, ...]


@dataclass(frozen=True)
class TaskData:
    """A task's tokenizer and its two disjoint splits.

    Attributes:
        name: The task's name, a key of :data:`TARGETS`.
        tokenizer: Spells every id; symbol ``k`` is the word ``str(k)``.
        train: Examples to train on.
        test: Held-out examples; none of their sources occurs in ``train``.
    """

    name: str
    tokenizer: Tokenizer
    train: tuple[Example, ...]
    test: tuple[Example, ...]

    @property
    def vocab_size(self) -> int:
        """The vocabulary size ``V``, special tokens included."""
        return len(self.tokenizer)


def make_task(
    name: str,
    *,
    n_symbols: int = 10,
    min_len: int = 3,
    max_len: int = 8,
    n_train: int = 2000,
    n_test: int = 200,
    seed: int = 0,
) -> TaskData:
    """Generate a task's examples: distinct random sources, split into train and test.

    Sources have a length drawn uniformly from ``min_len .. max_len``. For
    ``"copy"``, ``"reverse"`` and ``"sort"`` their symbols are drawn uniformly;
    for ``"count"`` a source is a run of consecutive numbers ``a, a+1, ...``
    and its target is the run shifted by one, ``a+1, a+2, ...``.

    Args:
        name: ``"copy"``, ``"reverse"``, ``"sort"`` or ``"count"``.
        n_symbols: Number of distinct symbols.
        min_len: Shortest source.
        max_len: Longest source.
        n_train: Number of training examples.
        n_test: Number of held-out examples.
        seed: Seed of the generator that draws the examples.

    Returns:
        The tokenizer and the two splits.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If ``name`` is unknown, a size is not positive,
            ``min_len > max_len``, ``count`` runs would pass ``n_symbols``, or
            fewer distinct sources exist than ``n_train + n_test``.
    """
    check_make_task_args(tuple(TARGETS), **locals())
    g = torch.Generator().manual_seed(seed)
    tokenizer = Tokenizer(str(k) for k in range(n_symbols))
    offset = len(tokenizer) - n_symbols  # symbol k has id k + offset
    seen: dict[tuple[int, ...], None] = {}  # ordered set of distinct sources
    while len(seen) < n_test + n_train:
        n = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        if name == "count":
            start = int(torch.randint(0, n_symbols - n, (1,), generator=g))
            symbols = tuple(range(start, start + n))
        else:
            symbols = tuple(torch.randint(0, n_symbols, (n,), generator=g).tolist())
        seen.setdefault(symbols)
    examples = [
        Example(
            tuple(s + offset for s in src),
            tuple(t + offset for t in TARGETS[name](src)),
        )
        for src in seen
    ]
    return TaskData(name, tokenizer, tuple(examples[n_test:]), tuple(examples[:n_test]))
