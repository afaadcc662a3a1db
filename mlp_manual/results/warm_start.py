"""Starting a run from a trained model's weights (``model.init_from``, ``mlp-train --init-from``).

The config's layers must be the trained model's layers: the same types, widths and options
(the weight init aside, which the loaded weights replace). The optimizer starts afresh.
"""

from ..datasets import Dataset
from ..errors import ConfigError, DataError
from ..model import Model
from ..predict.model_file import read_model


def layer_description(spec: dict | None) -> str:
    """``Linear(in_features=4, out_features=16, bias=True)`` from a layer's JSON spec."""
    if spec is None:
        return "nothing"
    options = ", ".join(f"{k}={v!r}" for k, v in spec.items() if k not in ("type", "init"))
    return f"{spec['type']}({options})"


def warm_start(model: Model, data: Dataset, path) -> list[str]:
    """Copy the weights of the model file at ``path`` into ``model`` (built from the config, for
    ``data``). Raises ConfigError naming the first layer that differs. Returns warnings: a file
    trained on other class labels or with another preprocessing."""
    trained, info = read_model(path)
    ours, theirs = model.spec(), trained.spec()
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        strip = (lambda s: None if s is None else {k: v for k, v in s.items() if k != "init"})
        if strip(a) != strip(b):
            raise ConfigError(f"--init-from {path}: layer {i} differs: the config builds {layer_description(a)}, "
                              f"the model file has {layer_description(b)}")
    model.load_state(trained.state())
    warnings = []
    classes = tuple(data.class_names) if data.class_names else (tuple(range(data.n_classes)) if data.n_classes else None)
    if info.classes is not None and classes is not None and tuple(info.classes) != classes:
        warnings.append(f"WARNING --init-from {path} was trained on classes {list(info.classes)[:5]}, this data has "
                        f"{list(classes)[:5]}: its output units now stand for other classes")
    p, ours = info.preprocessing, data.preprocessing
    if p is not None and ours is not None and p.categories != ours.categories:
        raise DataError(f"--init-from {path} was trained on other categories ({_categories(p)}) than this data has "
                        f"({_categories(ours)}): its input weights would stand for other categories")
    if p is not None and ours is not None and p.kind != ours.kind:
        warnings.append(f"WARNING --init-from {path} was trained on inputs preprocessed with "
                        f"{p.kind}, this run uses {ours.kind}")
    return warnings


def _categories(p) -> str:
    """A preprocessing's categories in a few words."""
    if p.categories is None:
        return "none"
    return "; ".join(", ".join(c[:4]) + (", ..." if len(c) > 4 else "") for c in p.categories if c is not None)
