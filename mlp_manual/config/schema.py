"""The shape of a run configuration: frozen dataclasses, one per section, each key a field
holding its declaration (an ``Option`` of mlp_manual/options.py: kind, default, range, help),
the vocabulary every choosable thing declares its own options with.

Every key has a default; ``parse`` fills these from a YAML document and raises ConfigError
naming the key and the file (or ``--set``) for an unknown key, a wrong type or a bad value.
The options of a chosen thing are not listed here but declared where it is implemented, and
read from there: a dataset's (the data section), an optimizer's, a schedule's.
"""

import dataclasses
import functools
import typing
from dataclasses import dataclass, field

from ..core.init import init_names
from ..datasets.load import LOADERS, dataset_options
from ..devices import DEVICES
from ..layers.registry import check_spec
from ..losses import LOSSES
from ..optimizers import OPTIMIZERS
from ..options import (
    BOOL,
    FRACTION,
    INTEGER,
    NAME,
    NOT_NEGATIVE,
    POSITIVE,
    REAL,
    TEXT,
    Items,
    Kind,
    Option,
    OrNone,
    choice,
)
from ..schedules import SCHEDULES

DATASET_NAMES = tuple(LOADERS)
LOSS_NAMES = tuple(LOSSES)
OPTIMIZER_NAMES = tuple(OPTIMIZERS)
SCHEDULE_NAMES = tuple(SCHEDULES)


def _opt(kind: Kind, default, check=None, must: str = "", help: str = ""):
    """A field with its default and its declaration: the kind of value, a range ``check`` whose
    words ``must`` end "<key> must ...", and one line of ``help`` for the reference."""
    return field(default=default, metadata={"option": Option(kind, default, check, must, help)})


def _choice(names, default: str, help: str = ""):
    return field(default=default, metadata={"option": choice(tuple(names), default, help)})


def _data_config():
    """The data section: the keys every dataset has, then the options the datasets declare
    (datasets/load.py ``dataset_options``: each in the module that reads it)."""
    common = [
        ("name", str, _choice(DATASET_NAMES, "moons", "the dataset")),
        ("val_fraction", float, _opt(REAL, 0.2, *FRACTION, "the share of the training rows held out for validation")),
        ("test_fraction", float, _opt(REAL, 0.0, *FRACTION, "the share of the rows held out for the test")),
        ("preprocess", str, _choice(("none", "scale", "standardize"), "none", "what the features become")),
        ("target_preprocess", str, _choice(("none", "standardize"), "none",
                                           "regression targets; answers in their units")),
        ("data_dir", str | None, _opt(OrNone(TEXT), None, help="where mnist / fashion_mnist files live")),
    ]
    declared = [(key, object, field(default=option.default, metadata={"option": option}))
                for key, option in dataset_options().items()]
    return dataclasses.make_dataclass("DataConfig", common[:1] + declared + common[1:], frozen=True,
                                      namespace={"__module__": __name__})


DataConfig = _data_config()


@dataclass(frozen=True)
class ModelConfig:
    layers: tuple = _opt(Items("a list", check_spec),
                         ({"type": "linear", "units": 16}, {"type": "relu"}, {"type": "linear"}))
    init: str = _choice(init_names(), "he_uniform")
    init_from: str | None = _opt(OrNone(TEXT), None,
                                 help="a trained model.npz whose weights start the run (mlp-train --init-from)")


def class_weight_setting(v) -> bool:
    """loss.class_weights: "balanced", or a mapping of class labels to weights > 0."""
    if isinstance(v, str):
        return v == "balanced"
    return all(isinstance(k, (str, int, float)) and isinstance(w, (int, float))  # a label YAML read as true is a bool
               and not isinstance(w, bool) and 0 < w < float("inf") for k, w in v.items())


@dataclass(frozen=True)
class LossConfig:
    name: str = _choice(LOSS_NAMES, "softmax_cross_entropy", "a name alone stands for the section: loss: mse")
    class_weights: str | dict | None = _opt(
        OrNone(Kind("a string or a mapping", lambda v: isinstance(v, (str, dict)))), None, class_weight_setting,
        "be balanced, or a mapping of class labels to weights > 0", "classification")
    label_smoothing: float = _opt(REAL, 0.0, *FRACTION,
                                  "softmax_cross_entropy: the share of each target spread evenly over the classes")


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
    name: str = _choice(OPTIMIZER_NAMES, "adam")
    lr: float = _opt(REAL, 0.001, *POSITIVE, "the learning rate (the schedule's start)")
    weight_decay: float = _opt(REAL, 0.0, *NOT_NEGATIVE, "shrinks weight matrices, never biases or norm scales")
    clip_norm: float | None = _opt(OrNone(REAL), None, *POSITIVE, "the largest norm of all gradients together")
    accumulate: int = _opt(INTEGER, 1, *POSITIVE, "micro-batches summed into one step")
    options: dict = chosen_options(OPTIMIZERS, "adam")  # the named optimizer's: optimizers.py


@dataclass(frozen=True)
class ScheduleConfig:
    name: str = _choice(SCHEDULE_NAMES, "constant")
    options: dict = chosen_options(SCHEDULES, "constant")  # the named schedule's: schedules.py


@dataclass(frozen=True)
class EarlyStoppingConfig:
    patience: int = _opt(INTEGER, 0, *NOT_NEGATIVE, "epochs without improvement; 0 turns it off")
    min_delta: float = _opt(REAL, 0.0, *NOT_NEGATIVE, "the least change that counts as improvement")
    monitor: str = _choice(("val_loss", "val_acc"), "val_loss")
    restore_best: bool = _opt(BOOL, True, help="the best epoch's weights are the model's at the end")


MAX_EPOCHS = 1_000_000  # 100 s of the smallest run (xor); a typo such as 1e12 would run for ever


@dataclass(frozen=True)
class TrainingConfig:
    epochs: int = _opt(INTEGER, 100, lambda v: 1 <= v <= MAX_EPOCHS, f"be between 1 and {MAX_EPOCHS}")
    batch_size: int = _opt(INTEGER, 32, *POSITIVE)
    shuffle: bool = _opt(BOOL, True, help="a new order of the rows every epoch")
    early_stopping: EarlyStoppingConfig = EarlyStoppingConfig()
    checkpoint_seconds: float = _opt(REAL, 5.0, *NOT_NEGATIVE, "training time between checkpoints; 0: no time rule")
    checkpoint_every: int = _opt(INTEGER, 0, *NOT_NEGATIVE, "also checkpoint every N epochs; 0: by time only")


@dataclass(frozen=True)
class DiagnosticsConfig:
    enabled: bool = _opt(BOOL, False)
    every: int = _opt(INTEGER, 0, *NOT_NEGATIVE, "steps between records; 0 means once per epoch")
    vanishing: float = _opt(REAL, 1e-7, *POSITIVE, "grad norm / weight norm below this is VANISHING")
    layer_ratio: float = _opt(REAL, 1e-3, lambda v: 0 < v < 1, "be in (0, 1)", "of the largest layer's")
    explode_factor: float = _opt(REAL, 10.0, lambda v: v > 1, "be > 1", "jump over the running median")
    max_grad_norm: float | None = _opt(OrNone(REAL), None, *POSITIVE, "a grad norm above this is EXPLODING")
    dead_fraction: float = _opt(REAL, 0.5, lambda v: 0 < v <= 1, "be in (0, 1]")


@dataclass(frozen=True)
class Config:
    name: str = _opt(NAME, "run", lambda v: len(v) <= 255, "be at most 255 characters")
    seed: int = _opt(INTEGER, 0, *NOT_NEGATIVE)
    dtype: str = _choice(("float32", "float64"), "float32")
    device: str = _choice(tuple(DEVICES), "cpu", "where training computes (devices.py): numpy on the CPU, "
                          "CuPy on an NVIDIA GPU, or array-api-strict")
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    loss: LossConfig = LossConfig()  # written as a name alone when it has no other key: loss: mse
    optimizer: OptimizerConfig = OptimizerConfig()
    schedule: ScheduleConfig = ScheduleConfig()
    training: TrainingConfig = TrainingConfig()
    diagnostics: DiagnosticsConfig = DiagnosticsConfig()
    # Not a key (it has no annotation): how a message about the config's values names it, as
    # config_from_dict was told ("c.yaml with --set training.batch_size=..."); see ``read_from``.
    source = "the config"

    def read_from(self, source: str) -> "Config":
        """This config, naming ``source`` from now on (set once, as it is made: it is frozen, and
        ``dataclasses.replace`` does not carry what is not a field)."""
        object.__setattr__(self, "source", source)
        return self


def section_choices(cls) -> dict | None:
    """The things section ``cls`` chooses among by its ``name`` (name -> what declares
    ``options``): the datasets, whose options are fields of the data section itself, or an
    options field's registry (optimizers, schedules); None for a section without a choice."""
    return LOADERS if cls is DataConfig else options_registry(cls)


def other_choices_keys(cls, name) -> set[str]:
    """The keys of section ``cls`` that do not apply when it names ``name``: the options of the
    things it does not choose that ``name`` does not declare too (a names dataset's
    ``data.noise``, an adam optimizer's ``momentum``). Empty for a section without a choice, and
    for a name it does not know (the validator says so)."""
    things = section_choices(cls)
    if things is None or not isinstance(name, str) or name not in things:
        return set()
    every = {k for thing in things.values() for k in getattr(thing, "options", {})}
    return every - set(getattr(things[name], "options", {}))


def keys_that_apply(document, cls=None):
    """``document``, a config as a file holds it (sections nested, the options of a chosen thing
    flat beside its section's own keys), with only the keys that apply to its choices: in a
    section that chooses a thing by its ``name`` (data, optimizer, schedule), the section's own
    keys and that thing's options (``other_choices_keys``). Every other key is kept as it is,
    unknown ones too. What a run's config.yaml, best.yaml, mlp-runs and TensorBoard's
    hyperparameters show; a file that holds every key (as earlier versions wrote) reads the same."""
    cls = Config if cls is None else cls
    if not isinstance(document, dict):
        return document
    hints = typing.get_type_hints(cls)
    others = other_choices_keys(cls, document.get("name", _default(cls, "name")))
    return {k: keys_that_apply(v, hints[k]) if dataclasses.is_dataclass(hints.get(k)) else v
            for k, v in document.items() if k not in others}


def _default(cls, key: str):
    return next((f.default for f in dataclasses.fields(cls) if f.name == key), None)


@functools.cache
def declared_keys(cls=None) -> dict:
    """The keys a config may hold as a declaration tree (``options.find_unknown_keys``): each key
    of section ``cls`` (default: the whole config) -> the tree of the section it opens, or None
    for a value. Not to be changed: it is made once."""
    cls = Config if cls is None else cls
    hints = typing.get_type_hints(cls)
    return {k: declared_keys(hints[k]) if dataclasses.is_dataclass(hints.get(k)) else None for k in section_keys(cls)}
