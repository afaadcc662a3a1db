"""What defines a run's data split, recorded in its model file: the seed and fractions that carve
the split, and the SHA-256 of every data file the rows are read from. An evaluation that rebuilds
the split later compares this record with what it is about to use, so a data file that changed
since training (rows appended, another file at the same path) is refused instead of silently
mixing training rows into the "test" split.

Generated datasets (xor, moons, ...) and the datasets that ship with the package or are fetched
with their checksums have no file to fingerprint: their rows are a function of the config and the
seed, which the record holds.
"""

import hashlib
import math
from dataclasses import dataclass, field

from ..errors import DataError
from ..files import open_regular
from ..options import is_integer

FILE_KEYS = ("path", "val_path", "test_path")  # the data.* keys that name a file the rows come from
CHUNK = 1 << 20


def file_sha256(path, key: str) -> str | None:
    """The SHA-256 of a file's bytes, as 64 hex digits; None when there is no such file (its loader
    says so); raises DataError, naming the config ``key`` it came from, when it is not a regular
    file or cannot be read."""
    digest = hashlib.sha256()
    try:
        with open_regular(path, "rb", name=f"{path} ({key})") as f:
            while chunk := f.read(CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DataError(f"{path} ({key}): cannot read the data file ({e.strerror or e})") from None
    return digest.hexdigest()


@dataclass(frozen=True)
class SplitRecord:
    """The seed and fractions that carve a run's splits and the fingerprints of its data files."""

    seed: int
    val_fraction: float
    test_fraction: float
    files: dict[str, str] = field(default_factory=dict)  # "data.path" -> sha256 hex of the file

    @classmethod
    def of(cls, seed: int, data) -> "SplitRecord":
        """The record of a run with ``seed`` and the data section ``data`` (a DataConfig), the
        files fingerprinted as they are now (a missing file is left out)."""
        files = {f"data.{key}": file_sha256(getattr(data, key), f"data.{key}") for key in FILE_KEYS
                 if getattr(data, key, None)}
        return cls(seed, data.val_fraction, data.test_fraction, {k: v for k, v in files.items() if v})

    def to_json(self) -> dict:
        return {"seed": self.seed, "val_fraction": self.val_fraction, "test_fraction": self.test_fraction,
                "files_sha256": dict(self.files)}

    @classmethod
    def from_json(cls, spec) -> "SplitRecord":
        """The inverse of ``to_json``; raises ValueError saying what is wrong."""
        if not isinstance(spec, dict) or set(spec) != {"seed", "val_fraction", "test_fraction", "files_sha256"}:
            raise ValueError("expected seed, val_fraction, test_fraction and files_sha256")
        seed, files = spec["seed"], spec["files_sha256"]
        if not is_integer(seed):
            raise ValueError("seed must be an integer")
        for key in ("val_fraction", "test_fraction"):
            v = spec[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v < 1:
                raise ValueError(f"{key} must be a number in [0, 1)")
        if not isinstance(files, dict) or not all(
                k in {f"data.{key}" for key in FILE_KEYS} and isinstance(v, str) and len(v) == 64
                and all(c in "0123456789abcdef" for c in v) for k, v in files.items()):
            raise ValueError("files_sha256 must map data.path, data.val_path or data.test_path to a SHA-256")
        return cls(seed, float(spec["val_fraction"]), float(spec["test_fraction"]), dict(files))

    def difference(self, now: "SplitRecord") -> str | None:
        """What differs between this record (the run's) and ``now`` (what an evaluation would use),
        in words; None when they define the same split."""
        if now.seed != self.seed:
            return f"the config has seed {now.seed}, the run split its data with seed {self.seed}"
        for key in ("val_fraction", "test_fraction"):
            if getattr(now, key) != getattr(self, key):
                return f"the config has data.{key} {getattr(now, key)}, the run had {getattr(self, key)}"
        for key in sorted(set(self.files) | set(now.files)):
            if self.files.get(key) != now.files.get(key):
                if key not in now.files:
                    return f"the config has no {key}, the run read one"
                if key not in self.files:
                    return f"the config has a {key} the run did not read"
                return (f"the file at {key} has changed since the run read it (SHA-256 {self.files[key][:12]}... "
                        f"then, {now.files[key][:12]}... now)")
        return None
