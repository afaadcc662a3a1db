"""Generating items (names, words) with a trained text model, character by character.

Each item starts from a context of boundary tokens (then the prefix, if one is given). The
model gives the logits of the next character, the character is drawn from
softmax(logits / temperature), the context shifts by one, and the item ends when the boundary
token is drawn (or at ``max_length`` characters). Item i draws from its own generator, the i-th
child of ``SeedSequence(seed)``, so one seed gives the same items whatever the count and the
chunking: ``-n 5`` prints the first five of ``-n 20``.

N = items generated together (a chunk), T = context, V = vocabulary.
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..datasets.vocabulary import BOUNDARY, Vocabulary
from ..errors import DataError
from ..model import Model
from ..training.evaluation import model_outputs
from .model_info import ModelInfo

CHUNK = 1024  # items generated together: one forward per character for all of them


@dataclass(frozen=True)
class Item:
    text: str
    ended: bool  # the model drew the boundary token (False: cut at max_length)


def check_text_model(info: ModelInfo, name: str) -> Vocabulary:
    """The vocabulary of a text model; DataError naming ``name`` for any other model."""
    if not info.text:
        raise DataError(f"{name} is not a text model: it was trained on numbers, not characters; sampling needs "
                        "a model trained on data.name names or text")
    return info.vocabulary


def next_probabilities(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / temperature) in float64, each row summing to 1.

    Inputs: logits (N, V). Subtracting the row's maximum first keeps every exponent <= 0, so any
    temperature > 0, however small or large, gives finite probabilities.
    """
    z = logits.astype(np.float64)
    e = np.exp((z - z.max(axis=1, keepdims=True)) / temperature)  # (N, V), the likeliest entry exactly 1
    return e / e.sum(axis=1, keepdims=True)


def draw(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The index each row of probabilities p (N, V) gives a uniform draw u (N,) in [0, 1): the
    first whose cumulative probability exceeds u."""
    below = np.cumsum(p, axis=1) <= u[:, None]  # (N, V)
    return np.minimum(below.sum(axis=1), p.shape[1] - 1)  # rounding cannot carry past the last index


def generate(model: Model, vocabulary: Vocabulary, count: int, *, temperature: float = 1.0, seed: int = 0,
             prefix: str = "", max_length: int = 100) -> Iterator[Item]:
    """Yield ``count`` items, in order, a chunk of CHUNK at a time.

    Inputs: model, a text model (its first layer an embedding of T indices); vocabulary, its
    characters; prefix, characters of the vocabulary every item starts with; max_length, the
    most characters of an item (the prefix included), at least len(prefix).
    """
    context = model.input_width()
    start = np.concatenate([np.full(context, BOUNDARY, dtype=np.int64), vocabulary.encode(prefix)])[-context:]
    for first in range(0, count, CHUNK):
        n = min(CHUNK, count - first)
        generators = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(first + i,))) for i in range(n)]
        contexts = np.tile(start, (n, 1))  # (N, T)
        drawn = [[] for _ in range(n)]
        active = np.arange(n)  # the items still being written
        for _ in range(max_length - len(prefix)):
            if not active.size:
                break
            p = next_probabilities(model_outputs(model, contexts[active]), temperature)  # (A, V)
            nxt = draw(p, np.array([generators[i].random() for i in active]))  # (A,)
            for i, c in zip(active, nxt):
                drawn[i].append(int(c))
            contexts[active] = np.concatenate([contexts[active, 1:], nxt[:, None]], axis=1)
            active = active[nxt != BOUNDARY]
        for i in range(n):
            ended = bool(drawn[i]) and drawn[i][-1] == BOUNDARY
            yield Item(prefix + vocabulary.decode(drawn[i][:-1] if ended else drawn[i]), ended)
