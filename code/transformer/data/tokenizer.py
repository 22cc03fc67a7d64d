"""A toy word-level tokenizer: text to token ids and back, with PAD, BOS, EOS and UNK.

Real models cut text into sub-word pieces; this one cuts it into words and
punctuation marks, enough to show what a model receives: a row of integers.
The four reserved ids are the same in every vocabulary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import torch

from ..checks.data import (
    check_batch_texts,
    check_corpus_args,
    check_id_list,
    check_vocabulary_words,
)

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
"""Reserved ids of padding, beginning of sequence, end of sequence and unknown words."""

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")
"""The reserved tokens, in id order."""

_WORD = re.compile(r"\w+|[^\w\s]")


class Tokenizer:
    """Map words to integer ids and back; ids 0 to 3 are :data:`SPECIAL_TOKENS`.

    Args:
        words: The vocabulary without the special tokens, in id order: the
            first word gets id 4.
        lower: Lower-case text before looking words up.

    Attributes:
        id_to_token: Every token, indexed by its id.
        token_to_id: The inverse mapping.

    Raises:
        TypeError: If a word is not a string.
        ValueError: If a word is repeated or is not a single word as
            :meth:`split` sees it (special tokens are not).
    """

    def __init__(self, words: Iterable[str], *, lower: bool = True) -> None:
        self.lower, words = lower, list(words)
        check_vocabulary_words(words, self.split)
        self.id_to_token = [*SPECIAL_TOKENS, *words]
        self.token_to_id = {token: i for i, token in enumerate(self.id_to_token)}

    @classmethod
    def from_corpus(
        cls, texts: Iterable[str], *, min_count: int = 1, lower: bool = True
    ) -> Tokenizer:
        """Build a vocabulary from the words of ``texts``, most frequent first.

        Ties are broken in character (code-point) order, so the same corpus
        always gives the same ids.

        Args:
            texts: The corpus, one string per document or sentence.
            min_count: Leave out words seen fewer times; they become UNK.
            lower: Lower-case text before counting and looking words up.

        Returns:
            The tokenizer.

        Raises:
            TypeError: If ``texts`` is a single string rather than a collection,
                or ``min_count`` is not an int.
            ValueError: If ``min_count`` is not positive.
        """
        check_corpus_args(texts, min_count)
        splitter = cls((), lower=lower)
        counts = Counter(word for text in texts for word in splitter.split(text))
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return cls((w for w, n in ranked if n >= min_count), lower=lower)

    def __len__(self) -> int:
        """Return the vocabulary size ``V``, special tokens included."""
        return len(self.id_to_token)

    def split(self, text: str) -> list[str]:
        """Cut ``text`` into words and punctuation marks (lower-cased if asked)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return _WORD.findall(text.lower() if self.lower else text)

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """Turn ``text`` into token ids; unknown words become :data:`UNK_ID`.

        Args:
            text: The text.
            bos: Start with :data:`BOS_ID`.
            eos: End with :data:`EOS_ID`.

        Returns:
            The ids.

        Raises:
            TypeError: If ``text`` is not a string.
        """
        ids = [self.token_to_id.get(word, UNK_ID) for word in self.split(text)]
        return [BOS_ID] * bos + ids + [EOS_ID] * eos

    def decode(
        self,
        ids: Sequence[int] | torch.Tensor,
        *,
        stop_at_eos: bool = True,
        skip_special: bool = True,
    ) -> str:
        """Turn token ids back into text, words separated by spaces.

        Args:
            ids: The ids, a list or a one-dimensional tensor.
            stop_at_eos: Ignore everything from the first EOS on.
            skip_special: Leave out PAD, BOS and EOS (UNK stays visible).

        Returns:
            The text.

        Shape:
            ids: ``(L,)``

        Raises:
            TypeError: If ``ids`` does not hold integers.
            ValueError: If ``ids`` is not one-dimensional or an id is not in
                ``[0, V)``.
        """
        ids = check_id_list(ids, len(self))
        if stop_at_eos and EOS_ID in ids:
            ids = ids[: ids.index(EOS_ID)]
        hidden = {PAD_ID, BOS_ID, EOS_ID} if skip_special else set()
        return " ".join(self.id_to_token[i] for i in ids if i not in hidden)

    def encode_batch(
        self, texts: Sequence[str], *, bos: bool = False, eos: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode several texts into one batch, padded on the right with :data:`PAD_ID`.

        Args:
            texts: The texts.
            bos: Start every row with :data:`BOS_ID`.
            eos: End every row with :data:`EOS_ID`.

        Returns:
            ``(ids, lengths)``: the padded ids and the true length of each row,
            ready for :func:`~transformer.parts.masks.padding_mask`.

        Shape:
            - ids: ``(B, L)`` with ``L`` the longest row
            - lengths: ``(B,)``

        Raises:
            TypeError: If ``texts`` is a single string.
            ValueError: If ``texts`` is empty.
        """
        check_batch_texts(texts)
        rows = [self.encode(text, bos=bos, eos=eos) for text in texts]
        # (B, L), (B,)
        return pad_ids(rows), torch.tensor([len(r) for r in rows])


def pad_ids(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    """Stack rows of ids of different lengths into one tensor, right-padded with PAD.

    Shape:
        output: ``(B, L)`` with ``L`` the longest row (at least 1).

    Raises:
        ValueError: If ``rows`` is empty.
    """
    if len(rows) == 0:
        raise ValueError("rows must hold at least one row of ids, got none")
    # (B, L)
    ids = torch.full((len(rows), max(1, *map(len, rows))), PAD_ID)
    for b, row in enumerate(rows):
        ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
    return ids
