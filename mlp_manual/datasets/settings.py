"""What a loader reads: the data settings of a run, by name. A run config's ``data`` section
holds the keys every dataset has (config/schema.py) and every option a dataset declares
(``options`` of each ``load.LOADERS`` entry); a loader reads the common keys and its own
options as attributes of such an object.
"""

from typing import Any, Protocol


class DataSettings(Protocol):
    name: str  # the dataset: a key of load.LOADERS

    def __getattr__(self, key: str) -> Any: ...  # a common key, or a dataset's option
