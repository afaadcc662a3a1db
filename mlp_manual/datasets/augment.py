"""Input augmentation of image datasets: each training image moved by a few pixels at random
(``data.augment_shift``) and, with ``data.augment_flip``, mirrored left to right with
probability 1/2, afresh in every batch of every epoch. Only the training batches are changed;
validation and test images never are. A model trained so has seen translated digits: its
accuracy is not a permutation-invariant result (a permuted-pixel MLP could not be trained so).

The shifts and flips of a batch are drawn from a generator seeded by (run seed, epoch, batch), so a run
resumed mid-epoch draws exactly what it would have drawn.

B = rows of a batch, D = pixels = H * W.
"""

import numpy as np

from ..errors import ConfigError
from ..options import BOOL, INTEGER, Option

MAX_SHIFT = 8  # pixels; more moves an MNIST digit out of its 28 x 28 frame

SHIFT = {"augment_shift": Option(
    INTEGER, 0, lambda v: 0 <= v <= MAX_SHIFT, f"be in 0..{MAX_SHIFT}",
    help="training images moved up to this many pixels each way, at random (results are then not permutation-invariant)")}
# for pictures whose mirror image is of the same class (clothes), never digits: a mirrored 2 is no 2
FLIP = {"augment_flip": Option(BOOL, False, help="half the training images mirrored left to right, at random")}


def shift_images(X: np.ndarray, shape: tuple[int, int], dy: np.ndarray, dx: np.ndarray,
                 background: np.ndarray) -> np.ndarray:
    """X (B, D) as images of ``shape`` (H, W), row i moved down by dy[i] and right by dx[i]
    pixels (negative: up, left); the uncovered pixels take ``background`` (D,)'s values.
    Returns a new (B, D) array."""
    H, W = shape
    images = X.reshape(-1, H, W)  # (B, H, W)
    out = np.broadcast_to(background.reshape(H, W), images.shape).copy()  # (B, H, W)
    for y, x in set(zip(dy.tolist(), dx.tolist())):  # each distinct shift once, for all its rows
        rows = np.flatnonzero((dy == y) & (dx == x))
        # out[r, i + y, j + x] = images[r, i, j] wherever both are inside the frame
        out[rows, max(y, 0):H + min(y, 0), max(x, 0):W + min(x, 0)] = \
            images[rows, max(-y, 0):H - max(y, 0), max(-x, 0):W - max(x, 0)]
    return out.reshape(X.shape)


class RandomAugment:
    """``augment(Xb, epoch, batch)``: the batch Xb (B, D) with each image moved by up to
    ``max_shift`` pixels each way (uniform, independently along each axis) and, with ``flip``,
    half of them (at random) mirrored left to right first. ConfigError for a shift of half the
    image or more, which would leave images empty but for their label."""

    def __init__(self, max_shift: int, flip: bool, shape: tuple[int, int], background: np.ndarray, seed: int):
        if max_shift >= min(shape) // 2:
            raise ConfigError(f"data.augment_shift must be below {min(shape) // 2} for images of "
                              f"{shape[0]} x {shape[1]} pixels (half their side), got {max_shift}")
        self.max_shift, self.flip, self.shape, self.seed = int(max_shift), bool(flip), tuple(shape), int(seed)
        self.background = background  # (D,): an empty image as the model sees it (preprocessed)

    def __call__(self, Xb: np.ndarray, epoch: int, batch: int) -> np.ndarray:
        # its own stream: run_generators' three are children of SeedSequence(seed), this one is
        # seeded by the entropy (seed, epoch, batch)
        rng = np.random.default_rng([self.seed, epoch, batch])
        # drawn even without shifts, so the flips' draws do not depend on whether shifts are on
        dy, dx = rng.integers(-self.max_shift, self.max_shift + 1, size=(2, len(Xb)))
        if self.flip:
            mirrored = rng.random(len(Xb)) < 0.5  # (B,)
            images = Xb.reshape(-1, *self.shape)  # (B, H, W)
            Xb = np.where(mirrored[:, None, None], images[:, :, ::-1], images).reshape(Xb.shape)
        if not self.max_shift:  # every shift is (0, 0)
            return Xb
        return shift_images(Xb, self.shape, dy, dx, self.background.astype(Xb.dtype, copy=False))
