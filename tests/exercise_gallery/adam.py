PLANTED = [
    ("v_from_g", [("(1 - beta2) * g * g", "(1 - beta2) * g")]),
    ("v_from_g", [("v = beta2 * v + (1 - beta2) * g * g", "v = beta2 * v + g * (1 - beta2)")]),
    ("no_bias_correction", [("p = p - lr * m_hat / (np.sqrt(v_hat) + eps)", "p = p - lr * m / (np.sqrt(v) + eps)")]),
    ("no_bias_correction", [("m / (1 - beta1**t)", "m"), ("v / (1 - beta2**t)", "v")]),
    ("m_not_corrected", [("m / (1 - beta1**t)", "m")]),
    ("v_not_corrected", [("v / (1 - beta2**t)", "v")]),
    ("step_off_by_one", [("beta1**t)", "beta1 ** (t - 1))"), ("beta2**t)", "beta2 ** (t - 1))")]),
    ("step_plus_one", [("beta1**t)", "beta1 ** (t + 1))"), ("beta2**t)", "beta2 ** (t + 1))")]),
    ("eps_inside_sqrt", [("(np.sqrt(v_hat) + eps)", "np.sqrt(v_hat + eps)")]),
    ("wrong_sign", [("p = p - lr", "p = p + lr")]),
]

CORRECT = [
    [("p = p - lr * m_hat / (np.sqrt(v_hat) + eps)", "p -= lr * m_hat / (v_hat ** 0.5 + eps)")],
    [("m = beta1 * m + (1 - beta1) * g", "m = m + (1 - beta1) * (g - m)")],
    [("(1 - beta2) * g * g", "(1 - beta2) * np.square(g)")],
]
