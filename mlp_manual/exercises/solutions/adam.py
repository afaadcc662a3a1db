"""Exercise: one step of Adam, for one parameter array.

    m = beta1 * m + (1 - beta1) * g            the running mean of the gradient
    v = beta2 * v + (1 - beta2) * g**2         the running mean of its square
    m_hat = m / (1 - beta1**t)                 bias correction: m and v start at 0, so early on
    v_hat = v / (1 - beta2**t)                 they are too small by exactly these factors
    p = p - lr * m_hat / (sqrt(v_hat) + eps)

    p, g, m, v    arrays of one shape: the parameter, its gradient, Adam's two slots
    t             the step number, 1 at the first step

Return the new (p, m, v), new arrays or the old ones updated. Why does the first step (t = 1,
m = v = 0) move every entry by about lr, whatever the size of its gradient?

Check it with `mlp-exercise check adam`.
"""

import numpy as np


def adam_step(p, g, m, v, t: int, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
    """One Adam update of p with gradient g: the new (p, m, v)."""
    beta1, beta2 = betas
    # >>> write here: the new m and v, their bias-corrected m_hat and v_hat, and the new p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**t)
    v_hat = v / (1 - beta2**t)
    p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    # <<<
    return p, m, v
