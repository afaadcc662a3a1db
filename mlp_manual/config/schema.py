"""The shape of a run configuration: frozen dataclasses, one per section, each field with its
default and its range check, its list of choices, or the check of each item of a list.

Every key has a default; ``parse`` fills these from a YAML document and raises ConfigError
naming the key and the file (or ``--set``) for an unknown key, a wrong type or a bad value.
The options of a chosen thing are not listed here but declared where it is implemented, and
read from there: a dataset's (the data section), an optimizer's, a schedule's.
"""

import dataclasses
from dataclasses import dataclass, field

from ..datasets.load import LOADERS, dataset_options
from ..init import init_names
from ..layers.registry import check_spec
from ..losses import LOSSES
from ..optimizers import OPTIMIZERS
from ..schedules import SCHEDULES

DATASET_NAMES = tuple(LOADERS)
LOSS_NAMES = tuple(LOSSES)
OPTIMIZER_NAMES = tuple(OPTIMIZERS)
SCHEDULE_NAMES = tuple(SCHEDULES)


def _opt(default, *, check=None, must="", choices=None, each=None, help=""):
    """A field with a default and an optional range check or list of choices; ``each(item, key)``
    checks and normalises every item of a list; ``help``: its line in the reference (a class's
    trailing comment does that elsewhere)."""
    return field(default=default, metadata={"check": check, "must": must, "choices": choices, "each": each,
                                            "help": help})


positive = {"check": lambda v: v > 0, "must": "be > 0"}
non_negative = {"check": lambda v: v >= 0, "must": "be >= 0"}
fraction = {"check": lambda v: 0 <= v < 1, "must": "be in [0, 1)"}


def _data_config():
    """The data section: the keys every dataset has, then the options the datasets declare
    (datasets/load.py ``dataset_options``: each in the module that reads it), each field holding
    its declaration (``option``), which the parser validates it with."""
    common = [
        ("name", str, _opt("moons", choices=DATASET_NAMES, help="the dataset")),
        ("val_fraction", float, _opt(0.2, **fraction, help="the share of the training rows held out for validation")),
        ("test_fraction", float, _opt(0.0, **fraction, help="the share of the rows held out for the test")),
        ("preprocess", str, _opt("none", choices=("none", "scale", "standardize"), help="what the features become")),
        ("target_preprocess", str, _opt("none", choices=("none", "standardize"),
                                        help="regression targets; answers in their units")),
        ("data_dir", str | None, _opt(None, help="where mnist / fashion_mnist files live")),
    ]
    declared = [(key, object, field(default=option.default, metadata={"option": option}))
                for key, option in dataset_options().items()]
    return dataclasses.make_dataclass("DataConfig", common[:1] + declared + common[1:], frozen=True,
                                      namespace={"__module__": __name__})


DataConfig = _data_config()


@dataclass(frozen=True)
class ModelConfig:
    layers: tuple = _opt(({"type": "linear", "units": 16}, {"type": "relu"}, {"type": "linear"}), each=check_spec)
    init: str = _opt("he_uniform", choices=tuple(init_names()))
    init_from: str | None = None  # a trained model.npz whose weights start the run (mlp-train --init-from)


def class_weight_setting(v) -> bool:
    """loss.class_weights: "balanced", or a mapping of class labels to weights > 0."""
    if isinstance(v, str):
        return v == "balanced"
    return all(isinstance(k, (str, int, float)) and isinstance(w, (int, float))  # a label YAML read as true is a bool
               and not isinstance(w, bool) and 0 < w < float("inf") for k, w in v.items())


@dataclass(frozen=True)
class LossConfig:
    name: str = _opt("softmax_cross_entropy", choices=LOSS_NAMES)  # a name alone stands for the section: loss: mse
    class_weights: str | dict | None = _opt(None, check=class_weight_setting,  # classification
                                            must="be balanced, or a mapping of class labels to weights > 0")


def chosen_options(registry: dict, default: str):
    """A field holding the options of the thing a section's ``name`` chooses in ``registry``
    (name -> what declares ``options``). They are written flat in the section, beside its own
    keys (``optimizer: {name: sgd, momentum: 0.9}``), checked against the chosen thing's
    declaration; one it does not declare is an error. The default: ``default``'s defaults."""
    return field(default_factory=lambda: {k: o.default for k, o in registry[default].options.items()},
                 metadata={"options_of": registry})


def options_registry(cls) -> dict | None:
    """The registry whose chosen thing's options section ``cls`` holds, or None."""
    return next((f.metadata["options_of"] for f in dataclasses.fields(cls) if "options_of" in f.metadata), None)


def section_keys(cls) -> list[str]:
    """The keys a section of ``cls`` may hold: its own, and the options of any of its choices."""
    own = [f.name for f in dataclasses.fields(cls) if "options_of" not in f.metadata]
    registry = options_registry(cls) or {}
    return own + list(dict.fromkeys(k for thing in registry.values() for k in thing.options if k not in own))


@dataclass(frozen=True)
class OptimizerConfig:
    name: str = _opt("adam", choices=OPTIMIZER_NAMES)
    lr: float = _opt(0.001, **positive)
    weight_decay: float = _opt(0.0, **non_negative)
    clip_norm: float | None = _opt(None, **positive)
    accumulate: int = _opt(1, **positive)
    options: dict = chosen_options(OPTIMIZERS, "adam")  # the named optimizer's: optimizers.py


@dataclass(frozen=True)
class ScheduleConfig:
    name: str = _opt("constant", choices=SCHEDULE_NAMES)
    options: dict = chosen_options(SCHEDULES, "constant")  # the named schedule's: schedules.py


@dataclass(frozen=True)
class EarlyStoppingConfig:
    patience: int = _opt(0, **non_negative)  # epochs without improvement; 0 turns it off
    min_delta: float = _opt(0.0, **non_negative)
    monitor: str = _opt("val_loss", choices=("val_loss", "val_acc"))
    restore_best: bool = True


MAX_EPOCHS = 1_000_000  # 100 s of the smallest run (xor); a typo such as 1e12 would run for ever


@dataclass(frozen=True)
class TrainingConfig:
    epochs: int = _opt(100, check=lambda v: 1 <= v <= MAX_EPOCHS, must=f"be between 1 and {MAX_EPOCHS}")
    batch_size: int = _opt(32, **positive)
    shuffle: bool = True
    early_stopping: EarlyStoppingConfig = EarlyStoppingConfig()
    checkpoint_seconds: float = _opt(5.0, **non_negative)  # training time between checkpoints; 0: no time rule
    checkpoint_every: int = _opt(0, **non_negative)  # also checkpoint every N epochs; 0: by time only


@dataclass(frozen=True)
class DiagnosticsConfig:
    enabled: bool = False
    every: int = _opt(0, **non_negative)  # steps between records; 0 means once per epoch
    vanishing: float = _opt(1e-7, **positive)  # grad norm / weight norm below this is VANISHING
    layer_ratio: float = _opt(1e-3, check=lambda v: 0 < v < 1, must="be in (0, 1)")  # of the largest layer's
    explode_factor: float = _opt(10.0, check=lambda v: v > 1, must="be > 1")  # jump over the running median
    max_grad_norm: float | None = _opt(None, **positive)  # a grad norm above this is EXPLODING
    dead_fraction: float = _opt(0.5, check=lambda v: 0 < v <= 1, must="be in (0, 1]")


@dataclass(frozen=True)
class Config:
    name: str = _opt("run", check=lambda v: len(v) <= 255, must="be at most 255 characters")
    seed: int = _opt(0, **non_negative)
    dtype: str = _opt("float32", choices=("float32", "float64"))
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    loss: LossConfig = LossConfig()  # written as a name alone when it has no other key: loss: mse
    optimizer: OptimizerConfig = OptimizerConfig()
    schedule: ScheduleConfig = ScheduleConfig()
    training: TrainingConfig = TrainingConfig()
    diagnostics: DiagnosticsConfig = DiagnosticsConfig()
