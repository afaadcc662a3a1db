PLANTED = [
    ("derivative_of_input", [("dout * s * (1 - s)  #", "dout * x * (1 - x)  #")]),
    ("derivative_of_input", [("dout * s * (1 - s)  #", "dout * self.x * (1 - self.x)  #")]),
    ("activation_applied_twice", [("dout * s * (1 - s)  #", "dout * (1 / (1 + np.exp(-s))) * (1 - 1 / (1 + np.exp(-s)))  #")]),
    ("missing_activation_derivative", [("return dout * s * (1 - s)  #", "return dout  #")]),
    ("wrong_sign", [("dout * s * (1 - s)  #", "-dout * s * (1 - s)  #")]),
    ("wrong_sign", [("dout * s * (1 - s)  #", "dout * s * (s - 1)  #")]),
]

CORRECT = [
    [("dout * s * (1 - s)  #", "dout * np.exp(-x) / (1 + np.exp(-x)) ** 2  #")],
    [("dout * s * (1 - s)  #", "dout * (s - s * s)  #")],
    [("dout * s * (1 - s)  #", "dout * s * (1 - 1 / (1 + np.exp(-x)))  #")],
]
