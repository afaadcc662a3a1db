"""Where downloadable datasets live on disk.

A data directory holds one subfolder per dataset (``mnist/``, ``fashion_mnist/``). Candidates,
in order: the ``--data-dir`` option (``data.data_dir``), the ``MLP_MANUAL_DATA`` environment
variable, ``./data``, and the user cache (``$XDG_CACHE_HOME/mlp-manual``, else
``~/.cache/mlp-manual``). An explicit ``--data-dir`` is the only place looked at; otherwise the
first candidate that holds every file of the dataset wins.
"""

import os
from pathlib import Path

from ..errors import DataError

ENV_VAR = "MLP_MANUAL_DATA"

# dataset -> the IDX files it needs, without the optional ".gz"
IDX_FILES = {
    name: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
    for name in ("mnist", "fashion_mnist")
}


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mlp-manual``, or ``~/.cache/mlp-manual`` when the variable is unset or empty."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mlp-manual"


def candidate_dirs(data_dir: str | os.PathLike | None = None) -> list[tuple[Path, str]]:
    """The data directories to search, each with the reason it is a candidate."""
    if data_dir:
        return [(Path(data_dir), "--data-dir")]
    found = []
    if os.environ.get(ENV_VAR):
        found.append((Path(os.environ[ENV_VAR]), f"${ENV_VAR}"))
    found.append((Path("data"), "./data"))
    found.append((user_cache_dir(), "user cache"))
    return found


def download_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Where ``mlp-data fetch`` writes: ``--data-dir``, else ``$MLP_MANUAL_DATA``, else the user cache.

    ``./data`` is searched but never written to unasked, so a fetch does not litter the
    current folder.
    """
    if data_dir:
        return Path(data_dir)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    return user_cache_dir()


def find_file(folder: Path, stem: str) -> Path | None:
    """``folder/stem`` or ``folder/stem.gz``, whichever exists (uncompressed first); one that
    is not a regular file (a named pipe, a folder) counts, for its reader to refuse by name."""
    for path in (folder / stem, folder / f"{stem}.gz"):
        if path.exists():
            return path
    return None


def dataset_files(folder: Path, name: str) -> dict[str, Path] | None:
    """The dataset's files in ``folder``, keyed by stem; None unless all of them are there."""
    files = {stem: find_file(folder, stem) for stem in IDX_FILES[name]}
    return None if None in files.values() else files


def locate(name: str, data_dir: str | os.PathLike | None = None) -> dict[str, Path]:
    """Find a downloadable dataset's files.

    Returns: {stem: path} for the first candidate directory whose ``name/`` subfolder holds them all.
    Raises DataError, one line, naming the fetch command and every place looked at.
    """
    looked = []
    for folder, why in candidate_dirs(data_dir):
        files = dataset_files(folder / name, name)
        if files:
            return files
        looked.append(f"{folder / name} ({why})")
    fetch = f"mlp-data fetch {name}" + (f" --data-dir {data_dir}" if data_dir else "")
    elsewhere = "" if data_dir else f", or set {ENV_VAR} to a folder that holds {name}/"
    raise DataError(f"{name} is not downloaded; run `{fetch}` to get it{elsewhere} (looked in {', '.join(looked)})")
