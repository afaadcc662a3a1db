"""gradcheck/user.py called directly: a user's layer imported by name, and a config's model
checked through its loss (the CLI tests cover the same through mlp-gradcheck)."""

import os
import sys

import pytest

from mlp_manual.errors import GradcheckError
from mlp_manual.gradcheck.user import (
    CONFIG_BATCH,
    check_config,
    check_user_layer,
    load_layer,
    split_spec,
)

SETTINGS = {"eps": 1e-5, "tol": 1e-7, "seed": 0, "max_elements": None}
MODULE = '''
import numpy as np
from broken_layers import TransposedWeightGrad
from mlp_manual.layers import Dropout, Tanh

SHARED = Tanh()


def make_dropout():
    return Dropout(0.5, rng=np.random.default_rng(0))


def raises():
    raise ValueError("no width\\nsecond line")
'''


@pytest.fixture
def module(module_in_cwd):
    """MODULE as a module in the current directory."""
    return module_in_cwd(MODULE)


def test_split_spec_takes_module_colon_attr_only():
    assert split_spec("my_layers:Swish") == ("my_layers", "Swish")
    for bad in ("my_layers", ":Swish", "my_layers:"):
        with pytest.raises(GradcheckError, match=r"expected MODULE:ATTR, e.g. my_layers:make_layer"):
            split_spec(bad)


def test_a_class_is_constructed_a_function_called_and_an_object_used_as_is(module):
    assert type(load_layer(f"{module}:TransposedWeightGrad")).__name__ == "TransposedWeightGrad"
    assert load_layer(f"{module}:make_dropout").p == 0.5
    assert load_layer(f"{module}:SHARED") is sys.modules[module].SHARED
    assert os.getcwd() not in sys.path  # the folder was only on the path for the import


def test_load_errors_name_the_spec_or_the_given_source(module):
    with pytest.raises(GradcheckError) as e:
        load_layer(f"{module}:raises")
    assert str(e.value) == (f"{module}:raises: raises() raised ValueError: no width (it must be callable "
                            "without arguments)")
    with pytest.raises(GradcheckError) as e:
        load_layer(f"{module}:Missing", source="--layer x")
    assert str(e.value) == f"--layer x: module {module!r} has no attribute 'Missing'"
    with pytest.raises(GradcheckError, match=r"^nowhere_module:f: cannot import 'nowhere_module': ModuleNotFoundError"):
        load_layer("nowhere_module:f")


def test_a_user_layer_is_checked_in_each_mode_that_differs(module):
    bug = check_user_layer(f"{module}:TransposedWeightGrad", (5, 4), **SETTINGS)
    assert [r.label for r in bug.reports] == [f"{module}:TransposedWeightGrad x(5, 4)"]
    assert not bug.passed and bug.reports[0].failed_tensors == ["W"]
    dropout = check_user_layer(f"{module}:make_dropout", (4, 3), **SETTINGS)
    assert [r.label.split()[-1] for r in dropout.reports] == ["train", "eval"] and dropout.passed
    assert "seed 0" in dropout.notes[0]


def test_a_config_model_is_checked_through_its_loss_on_at_most_config_batch_rows():
    suite = check_config("configs/xor.yaml", ["model.layers.1=relu"], **SETTINGS)
    assert [r.label for r in suite.reports] == ["xor (softmax_cross_entropy) X(4, 2)"] and suite.passed
    assert [r.name for r in suite.reports[0].rows][:2] == ["dlogits", "dx"]
    big = check_config("configs/moons.yaml", ["training.batch_size=100"], **SETTINGS)
    assert f"X({CONFIG_BATCH}, 2)" in big.reports[0].label
    assert big.notes == [f"{CONFIG_BATCH} training rows drawn with seed 0; the model is checked in float64"]
