"""Baselines for the character-level language model: counting characters and pairs.

:func:`unigram_bits` scores a model that ignores the past, one that predicts
each character by how often it occurs; :func:`bigram_bits` scores the
simplest model that uses the past at all,
one that predicts each character from the one before it, so that a trained
Transformer's bits per character (:func:`~transformer.training.charlm.bits_per_char`)
have something to be measured against.
"""

from __future__ import annotations

import torch

from ..checks.training import check_is_corpus
from .charlm import CharCorpus


def unigram_bits(corpus: CharCorpus) -> float:
    """Return the bits per character of a unigram model on the held-out text.

    The model gives each character its frequency in ``corpus.train``, with
    one added to every count (Laplace smoothing), whatever came before it.
    It is scored on the same characters as :func:`bigram_bits`, every
    held-out character but the first, so that the two compare.

    Args:
        corpus: The text; the counts come from its training part and the
            score from its validation part.

    Returns:
        The average of ``-log2 p(next)`` over ``corpus.val[1:]``.

    Raises:
        TypeError: If ``corpus`` is not a ``CharCorpus``.
        ValueError: If its ids are not 1-D tensors of two or more.
    """
    check_is_corpus(corpus)
    counts = torch.bincount(corpus.train, minlength=corpus.vocab_size).double() + 1.0
    return -(counts / counts.sum())[corpus.val[1:]].log2().mean().item()


def bigram_bits(corpus: CharCorpus) -> float:
    """Return the bits per character of a bigram model on the held-out text.

    The model predicts each character from the one before it only, with the
    pair frequencies counted on ``corpus.train``; one is added to every
    count (Laplace smoothing), so that a pair never seen in training does
    not get probability zero.

    Args:
        corpus: The text; the counts come from its training part and the
            score from its validation part.

    Returns:
        The average of ``-log2 p(next | previous)`` over ``corpus.val``.

    Raises:
        TypeError: If ``corpus`` is not a
            :class:`~transformer.training.charlm.CharCorpus`.
        ValueError: If its training or validation ids are not a 1-D tensor of
            two or more.
    """
    check_is_corpus(corpus)
    V, train, val = corpus.vocab_size, corpus.train, corpus.val
    pairs = train[:-1] * V + train[1:]  # one id per (previous, next) pair
    counts = torch.bincount(pairs, minlength=V * V).view(V, V).double() + 1.0
    bigram = counts / counts.sum(dim=1, keepdim=True)  # row c: p(next | previous c)
    return -bigram[val[:-1], val[1:]].log2().mean().item()
