PLANTED = [
    ("mask_from_dout", [("dout * (x > 0)  #", "dout * (dout > 0)  #")]),
    ("mask_from_dout", [("return dout * (x > 0)  #", "return np.where(dout > 0, dout, 0)  #")]),
    ("relu_ge_at_zero", [("dout * (x > 0)  #", "dout * (x >= 0)  #")]),
    ("relu_ge_at_zero", [("return dout * (x > 0)  #", "return np.where(x >= 0, dout, 0.0)  #")]),
    ("missing_activation_derivative", [("return dout * (x > 0)  #", "return dout  #")]),
    ("missing_activation_derivative", [("return dout * (x > 0)  #", "return dout * np.ones_like(x)  #")]),
    ("wrong_sign", [("return dout * (x > 0)  #", "return -dout * (x > 0)  #")]),
    ("wrong_sign", [("return dout * (x > 0)  #", "return -(dout * (x > 0))  #")]),
]

CORRECT = [
    [("return dout * (x > 0)  #", "return np.where(x > 0, dout, 0.0)  #")],
    [("return dout * (x > 0)  #", "return dout * np.heaviside(x, 0.0)  #")],
    [("return dout * (x > 0)  #", "dx = dout.copy()\n        dx[x <= 0] = 0\n        return dx  #")],
]
