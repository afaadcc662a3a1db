"""Every parameter of the estimators, declared once: its default, the values it takes (as
scikit-learn's parameter validation states them, so a bad value is a ValueError naming the
parameter) and its meaning, from which the estimators' docstrings are written. scikit-learn's
parameters keep their names, defaults and meanings; mlp-manual's own come after them."""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions

from ..core.init import init_names
from ..devices import DEVICES


@dataclass(frozen=True)
class Parameter:
    name: str
    default: object
    values: list  # scikit-learn's parameter constraints
    meaning: str
    ours: bool = False  # mlp-manual's, not scikit-learn's


ACTIVATION_NAMES = ("identity", "logistic", "tanh", "relu", "sigmoid", "leaky_relu", "gelu")
STOCHASTIC = ("sgd", "adam", "adamw", "rmsprop")
AT_LEAST_1 = Interval(Integral, 1, None, closed="left")
NOT_NEGATIVE = Interval(Real, 0, None, closed="left")
POSITIVE = Interval(Real, 0, None, closed="neither")
FRACTION = Interval(Real, 0, 1, closed="left")

SHARED = (
    Parameter("hidden_layer_sizes", (100,), ["array-like", AT_LEAST_1],
              "Units of each hidden layer; the output layer's width comes from the targets."),
    Parameter("activation", "relu", [StrOptions(set(ACTIVATION_NAMES))],
              "The hidden layers' activation: 'identity', 'logistic' (also 'sigmoid'), 'tanh', 'relu', and "
              "mlp-manual's 'leaky_relu' and 'gelu'."),
    Parameter("solver", "adam", [StrOptions({"lbfgs", *STOCHASTIC})],
              "'lbfgs' (scipy's L-BFGS-B on the whole training set), 'sgd' (with momentum), 'adam', and "
              "mlp-manual's 'adamw' and 'rmsprop'."),
    Parameter("alpha", 0.0001, [NOT_NEGATIVE],
              "L2 penalty: alpha / 2 times the sum of the squared weights, divided by the batch's rows (its sample weights' sum) is "
              "added to the batch's loss; weight matrices only. With solver='adamw' it is the decoupled weight "
              "decay instead: before each step, W -= learning_rate * alpha * W (the loss has no L2 term)."),
    Parameter("batch_size", "auto", [StrOptions({"auto"}), AT_LEAST_1],
              "Rows per mini-batch; 'auto' is min(200, rows); clipped to the rows. Not used by 'lbfgs'."),
    Parameter("learning_rate", "constant", [StrOptions({"constant", "invscaling", "adaptive"})],
              "The schedule of solver 'sgd': 'constant'; 'invscaling', learning_rate_init / (samples seen "
              "+ 1)^power_t after each epoch; 'adaptive', divided by 5 where the stopping rule would stop, "
              "until at most 1e-6."),
    Parameter("learning_rate_init", 0.001, [POSITIVE], "The learning rate (the first, with a schedule)."),
    Parameter("power_t", 0.5, [NOT_NEGATIVE], "The exponent of learning_rate='invscaling'."),
    Parameter("max_iter", 200, [AT_LEAST_1],
              "The most epochs (iterations for 'lbfgs') one fit trains."),
    Parameter("shuffle", True, ["boolean"], "Shuffle the rows before each epoch."),
    Parameter("random_state", None, ["random_state"],
              "Seeds the initial weights, the validation split, the shuffles (and dropout); an integer "
              "reproduces a fit."),
    Parameter("tol", 1e-4, [NOT_NEGATIVE],
              "The improvement that counts: the training loss must fall by tol (the validation score rise "
              "by tol with early_stopping) within n_iter_no_change + 1 epochs, or training stops; for "
              "'lbfgs', the gradient tolerance."),
    Parameter("verbose", False, ["verbose"], "Print each epoch's loss (and validation score)."),
    Parameter("warm_start", False, ["boolean"],
              "fit goes on from the weights of the last fit instead of starting anew."),
    Parameter("momentum", 0.9, [Interval(Real, 0, 1, closed="both")], "The momentum of solver 'sgd'."),
    Parameter("nesterovs_momentum", True, ["boolean"], "Nesterov's momentum for solver 'sgd' (momentum > 0)."),
    Parameter("early_stopping", False, ["boolean"],
              "Hold out validation_fraction of the rows (stratified for a single-output classifier), "
              "watch their score (accuracy or R^2) instead of the training loss, and keep the best "
              "epoch's weights. Stochastic solvers."),
    Parameter("validation_fraction", 0.1, [FRACTION], "The rows held out with early_stopping."),
    Parameter("beta_1", 0.9, [FRACTION], "Adam's decay of its running mean of gradients."),
    Parameter("beta_2", 0.999, [FRACTION], "Adam's decay of its running mean of squared gradients."),
    Parameter("epsilon", 1e-8, [POSITIVE], "Adam's (and rmsprop's) guard against dividing by 0."),
    Parameter("n_iter_no_change", 10, [AT_LEAST_1, Options(Real, {np.inf})],
              "Epochs without improvement (see tol) tolerated; np.inf never stops early."),
    Parameter("max_fun", 15000, [AT_LEAST_1], "The most loss evaluations of solver 'lbfgs'."),
)
OURS = (
    Parameter("dropout", 0.0, [FRACTION], "p of a dropout layer after each hidden activation; 0 adds none. "
              "Stochastic solvers.", True),
    Parameter("normalization", None, [StrOptions({"layernorm", "rmsnorm", "batchnorm"}), None],
              "A normalisation layer between each hidden linear layer and its activation.", True),
    Parameter("init", None, [StrOptions(set(init_names())), None],
              "The initialiser of the linear layers' weights (biases then start at 0); None is "
              "scikit-learn's: W and b uniform in +-sqrt(6 / (fan_in + fan_out)) (2 for 'logistic').", True),
    Parameter("dtype", None, [StrOptions({"float32", "float64"}), None],
              "The dtype of the weights and of the computation; None: the input's (float64 unless X is "
              "float32), as in scikit-learn.", True),
    Parameter("device", "cpu", [StrOptions(set(DEVICES))],
              "Where the stochastic solvers train: 'cpu' (numpy), 'cuda' (CuPy on an NVIDIA GPU: pip install "
              "'mlp-manual[gpu]') or 'array-api-strict'. X (dense) moves there once a fit, the network for each "
              "epoch and back; the fitted arrays, predictions and 'lbfgs' stay on the CPU.", True),
)
CLASS_WEIGHT = Parameter("class_weight", None, [dict, StrOptions({"balanced"}), None],
                         "Weights of the classes ({label: weight}, or 'balanced': rows / (classes * rows "
                         "of the class)), multiplying each row's sample weight.", True)
LOSS = Parameter("loss", "squared_error", [StrOptions({"squared_error", "poisson"})],
                 "'squared_error' (half the squared error, identity output) or 'poisson' (half the Poisson "
                 "deviance, exp output).")

CLASSIFIER = (*SHARED, CLASS_WEIGHT, *OURS)
REGRESSOR = (LOSS, *SHARED, *OURS)


def constraints(parameters) -> dict:
    """scikit-learn's ``_parameter_constraints`` of ``parameters``."""
    return {p.name: p.values for p in parameters}


def described(parameters) -> str:
    """The Parameters section of a docstring."""
    lines = ["", "    Parameters", "    ----------"]
    for p in parameters:
        lines += [f"    {p.name} : default={p.default!r}{'  (mlp-manual)' if p.ours else ''}", f"        {p.meaning}"]
    return "\n".join(lines) + "\n"
