"""Datasets: generated, CSV, shipped and downloaded, as arrays split and preprocessed for a run."""

from .dataset import Dataset
from .load import LOADERS, load_dataset

__all__ = ["Dataset", "LOADERS", "load_dataset"]
