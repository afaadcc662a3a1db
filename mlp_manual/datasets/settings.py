"""What a loader reads: the data settings of a run, by name. A run config's ``data`` section
has these keys (their defaults, ranges and meanings are declared there, in config/schema.py,
and listed in the config reference); a loader is given such an object and reads the keys it
declares (``config_keys``, load.py) and the common ones.
"""

from typing import Protocol


class DataSettings(Protocol):
    name: str  # the dataset: a key of load.LOADERS
    # generated datasets
    n_samples: int
    noise: float
    copies: int
    arms: int
    centers: int
    # files: csv and text
    path: str | None
    val_path: str | None
    test_path: str | None
    target: int | str
    columns: tuple | None
    drop: tuple
    missing: str
    categorical: tuple | None
    unseen_category: str
    header: bool
    delimiter: str
    task: str
    context: int
    data_dir: str | None  # downloaded datasets (mnist, fashion_mnist)
    # every dataset
    val_fraction: float
    test_fraction: float
    preprocess: str
    target_preprocess: str
