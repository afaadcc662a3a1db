"""Weight initialisers: each draws a (fan_in, fan_out) matrix from the generator it is given.

fan_in = input features, fan_out = output features.

| name           | distribution                          | suits            |
|----------------|---------------------------------------|------------------|
| glorot_uniform | U(-a, a), a = sqrt(6 / (in + out))    | tanh, sigmoid    |
| glorot_normal  | N(0, 2 / (in + out))                  | tanh, sigmoid    |
| he_uniform     | U(-a, a), a = sqrt(6 / in)            | ReLU family      |
| he_normal      | N(0, 2 / in)                          | ReLU family      |
| lecun_uniform  | U(-a, a), a = sqrt(3 / in)            | SELU, linear     |
| lecun_normal   | N(0, 1 / in)                          | SELU, linear     |
"""

import numpy as np


def _uniform(limit):
    return lambda rng, fan_in, fan_out: rng.uniform(-limit(fan_in, fan_out), limit(fan_in, fan_out), (fan_in, fan_out))


def _normal(std):
    return lambda rng, fan_in, fan_out: rng.normal(0.0, std(fan_in, fan_out), (fan_in, fan_out))


INITIALIZERS = {
    "glorot_uniform": _uniform(lambda i, o: np.sqrt(6.0 / (i + o))),
    "glorot_normal": _normal(lambda i, o: np.sqrt(2.0 / (i + o))),
    "he_uniform": _uniform(lambda i, o: np.sqrt(6.0 / i)),
    "he_normal": _normal(lambda i, o: np.sqrt(2.0 / i)),
    "lecun_uniform": _uniform(lambda i, o: np.sqrt(3.0 / i)),
    "lecun_normal": _normal(lambda i, o: np.sqrt(1.0 / i)),
}
ALIASES = {"xavier_uniform": "glorot_uniform", "xavier_normal": "glorot_normal",
           "kaiming_uniform": "he_uniform", "kaiming_normal": "he_normal"}


def init_weight(name: str, rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """Draw a (fan_in, fan_out) float64 weight matrix with the named initialiser."""
    return INITIALIZERS[ALIASES.get(name, name)](rng, fan_in, fan_out)


def init_names() -> list[str]:
    """Every accepted initialiser name, aliases included."""
    return sorted([*INITIALIZERS, *ALIASES])
