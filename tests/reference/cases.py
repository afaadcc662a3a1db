"""Configs whose trained weights are pinned in ``weights.npz``.

Together they use every layer type, optimizer, schedule and loss, early stopping with
restore, gradient accumulation, clipping and weight decay. ``make_weights.py`` wrote the
weights; ``tests/test_reference.py`` retrains and compares.

Every case trains in float64 and is short (at most a few hundred steps), so that the last-bit
differences between CPUs, BLAS kernels and numpy releases (about 1e-16 relative per operation)
stay far below the test's tolerance. No linear layer feeding a batch norm has a bias: batch
norm subtracts the batch mean, so such a bias gets no gradient but rounding noise, and its
value would be nothing but that noise. ``words.txt`` (every 200th name
of the shipped names list) is the text of the embedding case.
"""

from pathlib import Path

WORDS = str(Path(__file__).with_name("words.txt"))

CASES = {
    "relu-sgd-constant": {
        "data": {"name": "moons", "n_samples": 120},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 12}, "relu", {"type": "linear", "units": 8},
                             {"type": "leaky_relu", "slope": 0.05}, {"type": "linear"}]},
        "optimizer": {"name": "sgd", "lr": 0.1},
        "training": {"epochs": 4, "batch_size": 16},
    },
    "tanh-momentum-step": {
        "data": {"name": "spirals", "n_samples": 150},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 16, "init": "glorot_normal"}, "tanh",
                             {"type": "linear", "units": 16, "bias": False}, "sigmoid", {"type": "linear"}]},
        "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3},
        "schedule": {"name": "step", "step_size": 2, "gamma": 0.5},
        "training": {"epochs": 5, "batch_size": 32},
    },
    "gelu-rmsprop-exponential": {
        "data": {"name": "blobs", "n_samples": 150},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 10}, "gelu", {"type": "dropout", "p": 0.2},
                             {"type": "linear", "units": 10}, "identity", {"type": "linear"}]},
        "optimizer": {"name": "rmsprop", "lr": 0.01, "clip_norm": 1.0},
        "schedule": {"name": "exponential", "gamma": 0.9},
        "training": {"epochs": 4, "batch_size": 20},
    },
    "norms-adam-cosine": {
        "data": {"name": "circles", "n_samples": 160, "val_fraction": 0.25},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 12}, {"type": "layernorm"}, "relu",
                             {"type": "linear", "units": 12, "bias": False}, {"type": "batchnorm", "momentum": 0.2}, "relu",
                             {"type": "linear", "units": 12}, {"type": "rmsnorm"}, "tanh", {"type": "linear"}]},
        "optimizer": {"name": "adam", "lr": 0.01, "accumulate": 2},
        "schedule": {"name": "cosine", "warmup_epochs": 1, "min_lr": 1e-4},
        "training": {"epochs": 5, "batch_size": 24},
    },
    "adamw-bce-early-stop": {
        "data": {"name": "xor", "copies": 30, "noise": 0.2},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 8}, "relu", {"type": "linear"}]},
        "loss": "bce_with_logits",
        "optimizer": {"name": "adamw", "lr": 0.05, "weight_decay": 0.01},
        "training": {"epochs": 30, "batch_size": 16,
                     "early_stopping": {"patience": 3, "min_delta": 0.01, "restore_best": True}},
    },
    "residual-adam-clip": {
        "data": {"name": "spirals", "n_samples": 150},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 12},
                             {"type": "residual", "layers": [{"type": "layernorm"}, {"type": "linear", "units": 20},
                                                             "relu", {"type": "dropout", "p": 0.1}, {"type": "linear"}]},
                             {"type": "residual", "layers": [{"type": "residual", "layers": [{"type": "linear"}, "tanh"]},
                                                             {"type": "batchnorm"}]},
                             {"type": "linear"}]},
        "optimizer": {"name": "adam", "lr": 0.01, "clip_norm": 1.0},
        "training": {"epochs": 4, "batch_size": 25},
    },
    "embedding-adamw-text": {
        "data": {"name": "text", "path": WORDS, "context": 3},
        "dtype": "float64",
        "model": {"layers": [{"type": "embedding", "dim": 4}, {"type": "linear", "units": 16, "bias": False},
                             "batchnorm", "tanh", {"type": "linear"}]},
        "optimizer": {"name": "adamw", "lr": 0.01, "weight_decay": 0.01},
        "training": {"epochs": 3, "batch_size": 32},
    },
    "softmax-layer-mse": {
        "data": {"name": "sine", "n_samples": 100},
        "dtype": "float64",
        "model": {"layers": [{"type": "linear", "units": 8}, "softmax", {"type": "linear"}]},
        "loss": "mse",
        "optimizer": {"name": "adam", "lr": 0.02},
        "training": {"epochs": 4, "batch_size": 25},
    },
}
