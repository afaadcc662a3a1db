"""The characters of a text dataset and their indices, as makemore numbers them: index 0 is the
boundary token, which pads the context before a word and ends it; the characters of the training
words follow in sorted order, from 1.

V = vocabulary size (the characters and the boundary token).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

BOUNDARY = 0  # the index of the token that pads a context and ends a word


@dataclass(frozen=True)
class Vocabulary:
    """``characters[i]`` has index i + 1; index 0 (BOUNDARY) is the boundary token."""

    characters: tuple[str, ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)  # character -> its index

    def __post_init__(self):
        object.__setattr__(self, "index", {c: i + 1 for i, c in enumerate(self.characters)})

    @classmethod
    def from_words(cls, words: Iterable[str]) -> "Vocabulary":
        """The sorted characters that occur in ``words``."""
        return cls(tuple(sorted(set().union(*map(set, words)))))

    @property
    def size(self) -> int:
        """V: the characters and the boundary token."""
        return len(self.characters) + 1

    @property
    def boundary_label(self) -> str:
        """How the boundary token is shown: ``.`` as in makemore, or ``<.>`` when ``.`` is a character."""
        return "<.>" if "." in self.characters else "."

    def label(self, index: int) -> str:
        """The character of ``index``, or the boundary's label for 0."""
        return self.boundary_label if index == BOUNDARY else self.characters[index - 1]

    def unknown(self, text: str) -> str | None:
        """The first character of ``text`` that is not in the vocabulary, or None."""
        return next((c for c in text if c not in self.index), None)

    def encode(self, text: str) -> np.ndarray:
        """(len(text),) int64 indices; every character must be known (see ``unknown``)."""
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, indices) -> str:
        """The characters of ``indices`` (none of them the boundary)."""
        return "".join(self.characters[i - 1] for i in indices)

    def describe(self) -> str:
        """The characters in one quoted string, e.g. ``'abcdefghijklmnopqrstuvwxyz'``."""
        return repr("".join(self.characters))

    def to_json(self) -> list[str]:
        return list(self.characters)

    @classmethod
    def from_json(cls, value) -> "Vocabulary":
        """The inverse of ``to_json``; ValueError unless ``value`` is a list of distinct
        single characters, none of them a line break."""
        if not (isinstance(value, list) and value and all(isinstance(c, str) and len(c) == 1 and c not in "\r\n"
                                                          for c in value) and len(set(value)) == len(value)):
            raise ValueError("expected a list of distinct characters")
        return cls(tuple(value))
