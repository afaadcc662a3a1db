"""Text datasets, one item (a name, a word) per line, as makemore reads them: ``names`` (the names
list shipped with the package) and ``text`` (any file, ``data.path``).

The words are split into training, validation and test words first (``data.val_fraction`` and
``data.test_fraction`` of all the words, seeded), so no word is in two splits. The vocabulary is
the characters of the training words (``data.vocabulary: train``), and a validation or test word
with another character is an error that names its line; or the characters of every word
(``all``), for a short list of your own where a rare character may fall outside the training
split. Then every position of every word is one example: the ``context``
characters before it, padded with the boundary token, predict the character there, and the
boundary token after the last character ends the word:

    emma, context 3:  ... -> e,  ..e -> m,  .em -> m,  emm -> a,  mma -> .

N = examples, T = context, V = vocabulary size.
"""

from __future__ import annotations

import hashlib
import os
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import machine
from ..errors import DataError, TrainingWarning, short_repr
from ..files import open_regular
from ..options import INTEGER, Option, choice
from ..readable import readable_bytes
from .csvfile import PATHS
from .dataset import Dataset
from .real import SHIPPED_DIR
from .settings import DataSettings
from .vocabulary import BOUNDARY, Vocabulary

NAMES_FILE = SHIPPED_DIR / "names.txt"
NAMES_SHA256 = "0a30b5557f192f32ab962680889aac5f6fda0f4cecf40a6d0b5694f58ea8cc4d"
SPLIT_DEFAULTS = {"val_fraction": 0.1, "test_fraction": 0.1}  # 80/10/10 of the words, as in makemore
MAX_CONTEXT = 64
BYTES_PER_EXAMPLE_VALUE = 8 * 3  # int64 contexts, their gather and the split's copy


def read_words(data: bytes, name: str) -> tuple[list[str], list[int]]:
    """The items of a UTF-8 text, one per line, stripped of surrounding whitespace; blank lines
    are skipped. Returns the items and their line numbers (from 1). ``name`` starts errors."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(f"{name}: line {line} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    words, lines = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        word = line.strip()
        if word:
            words.append(word)
            lines.append(number)
    if not words:
        raise DataError(f"{name}: holds no items (a text dataset has one word or name per line)")
    return words, lines


def examples(words: list[np.ndarray], context: int) -> tuple[np.ndarray, np.ndarray]:
    """Every position of every word as an example, makemore's way.

    Inputs: words, each (L,) int64 character indices (no boundary); context T.
    Returns: X (N, T) int64 contexts, y (N,) int64 next characters; N = sum(L + 1).
    """
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    block = context + lengths + 1  # T boundary tokens, the word, the boundary that ends it
    starts = np.cumsum(block) - block  # (words,)
    flat = np.full(int(block.sum()), BOUNDARY, dtype=np.int64)
    if lengths.sum():
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        flat[np.repeat(starts + context, lengths) + within] = np.concatenate(words)
    targets = lengths + 1  # positions predicted per word: each character and the end
    within = np.arange(targets.sum()) - np.repeat(np.cumsum(targets) - targets, targets)
    at = np.repeat(starts + context, targets) + within  # (N,) positions of the predicted tokens in flat
    X = sliding_window_view(flat, context)[at - context]  # (N, T), the T tokens before each
    return np.ascontiguousarray(X), flat[at]


class TextLoader:
    """The ``LOADERS`` entry of a text dataset: ``read(cfg)`` gives the file's bytes and how to
    name it in messages; ``config_defaults`` are the split fractions a config that names this
    dataset gets unless it sets them."""

    config_defaults = SPLIT_DEFAULTS
    text = True  # its inputs are character indices (LOADERS entries without this attribute give numbers)

    def __init__(self, read, options: dict[str, Option]):
        self.read, self.options = read, options  # the data options it reads, besides the common keys

    def __call__(self, cfg: DataSettings, rng: np.random.Generator, dtype=None) -> Dataset:  # indices: no dtype
        data, name = self.read(cfg)
        if cfg.preprocess != "none":
            raise DataError(f"{name}: data.preprocess {cfg.preprocess} does not apply to text, whose inputs are "
                            "character indices; leave it at none")
        words, lines = read_words(data, name)
        parts = _split(len(words), cfg, rng, name)
        vocab = Vocabulary.from_words(words if cfg.vocabulary == "all" else [words[i] for i in parts["train"]])
        arrays = {}
        for part, rows in parts.items():
            if rows is None:
                continue
            for i in rows:
                char = vocab.unknown(words[i])
                if char is not None:
                    raise DataError(f"{name}: line {lines[i]}: {char!r} (in {short_repr(words[i])}) is not a character of the "
                                    f"training words, so it has no index; the word fell in the {part} split, and "
                                    f"the vocabulary {vocab.describe()} is built from the training split: set "
                                    "data.vocabulary: all to build it from every split")
            arrays[f"X_{part}"], arrays[f"y_{part}"] = examples([vocab.encode(words[i]) for i in rows], cfg.context)
        _note_a_long_line(words, lines, parts["train"], name)
        return Dataset(cfg.name, n_classes=vocab.size, source=name, vocabulary=vocab, **arrays)


LONG_LINE_SHARE = 0.5  # of the training examples: more, from one line, and the file is probably not a word list


def _note_a_long_line(words: list[str], lines: list[int], train: np.ndarray, name: str) -> None:
    """A TrainingWarning when one line makes most of the training examples (a paragraph, a
    whole text on one line): each line is an item, and each of its characters an example."""
    counts = np.array([len(words[i]) + 1 for i in train])  # examples per training word
    top = int(np.argmax(counts))
    share = counts[top] / counts.sum()
    if share > LONG_LINE_SHARE and len(train) > 1:
        i = train[top]
        warnings.warn(TrainingWarning("data", (
            f"WARNING {name}: line {lines[i]} alone makes {share:.0%} of the training examples ({len(words[i]):,} "
            "characters); a text dataset is one item (a word, a name) per line: split long lines into items")))


def _split(n: int, cfg: DataSettings, rng: np.random.Generator, name: str) -> dict[str, np.ndarray | None]:
    """Word indices of each split, each in file order; None for a split whose fraction is 0."""
    order = rng.permutation(n)
    sizes = {part: int(round(getattr(cfg, f"{part}_fraction") * n)) for part in ("test", "val")}
    for part, key, size in (("test", "test_fraction", sizes["test"]), ("validation", "val_fraction", sizes["val"])):
        if getattr(cfg, key) > 0 and size == 0:
            raise DataError(f"{name}: {n} words are too few for data.{key} {getattr(cfg, key)}: the {part} split "
                            f"gets no word; raise it, set it to 0, or add words")
    if sizes["test"] + sizes["val"] >= n:
        raise DataError(f"{name}: data.val_fraction and data.test_fraction leave none of the {n} words for training")
    cut = sizes["test"] + sizes["val"]
    return {"train": np.sort(order[cut:]),
            "val": np.sort(order[sizes["test"]:cut]) if cfg.val_fraction > 0 else None,
            "test": np.sort(order[:sizes["test"]]) if cfg.test_fraction > 0 else None}


def _check_size(size: int, context: int, name: str) -> None:
    """DataError, before a file of ``size`` bytes is read, when the examples it makes would not
    fit in a run's memory."""
    need = size * (context + 1) * BYTES_PER_EXAMPLE_VALUE  # at most a character per byte, each an example
    beyond = machine.beyond_limit(need)
    if beyond:
        raise DataError(f"{name}: {size:,} bytes of text with data.context {context} make examples that need "
                        f"{readable_bytes(need)}, {beyond}")


def _read_names(cfg: DataSettings) -> tuple[bytes, str]:
    """The shipped names list, checked against its SHA-256."""
    try:
        data = NAMES_FILE.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{NAMES_FILE}: the shipped names list is missing; reinstall mlp-manual") from None
    except OSError as e:
        raise DataError(f"{NAMES_FILE}: cannot read the shipped names list ({e.strerror or e})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != NAMES_SHA256:
        raise DataError(f"{NAMES_FILE}: the shipped names list is damaged (SHA-256 {digest[:16]}..., expected "
                        f"{NAMES_SHA256[:16]}...); reinstall mlp-manual")
    return data, "names"


def _read_text(cfg: DataSettings) -> tuple[bytes, str]:
    """The file ``data.path``."""
    if not cfg.path:
        raise DataError("data.path is required for the text dataset (a file with one item per line)")
    name = f"{cfg.path} (data.path)"
    try:
        with open_regular(cfg.path, "rb", name=name) as f:
            _check_size(os.fstat(f.fileno()).st_size, cfg.context, name)
            return f.read(), name
    except FileNotFoundError:
        rule = "" if os.path.isabs(cfg.path) else (" (a relative path in a config file is read from the file's "
                                                   "folder, one given with --set from the current folder)")
        raise DataError(f"{name}: no such data file{rule}") from None
    except OSError as e:
        raise DataError(f"{name}: cannot read the file ({e.strerror or e})") from None


CONTEXT = Option(INTEGER, 3, lambda v: 1 <= v <= MAX_CONTEXT, f"be between 1 and {MAX_CONTEXT}",
                 "characters of context")
VOCABULARY = choice(("train", "all"), "train", "the characters that get an index: the training words', or every word's")
names = TextLoader(_read_names, {"context": CONTEXT})
text = TextLoader(_read_text, {"path": PATHS["path"], "context": CONTEXT, "vocabulary": VOCABULARY})


# The load.LOADERS entries of the text datasets.
LOADERS = {"names": names, "text": text}
