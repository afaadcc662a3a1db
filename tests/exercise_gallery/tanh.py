PLANTED = [
    ("derivative_of_input", [("dout * (1 - t**2)  #", "dout * (1 - x**2)  #")]),
    ("derivative_of_input", [("dout * (1 - t**2)  #", "dout * (1 - self.x * self.x)  #")]),
    ("activation_applied_twice", [("dout * (1 - t**2)  #", "dout * (1 - np.tanh(t)**2)  #")]),
    ("activation_applied_twice", [("dout * (1 - t**2)  #", "dout * (1 - np.tanh(self.out) ** 2)  #")]),
    ("missing_activation_derivative", [("return dout * (1 - t**2)  #", "return dout  #")]),
    ("missing_square", [("dout * (1 - t**2)  #", "dout * (1 - t)  #")]),
    ("missing_square", [("dout * (1 - t**2)  #", "dout * (1 - self.out)  #")]),
    ("wrong_sign", [("dout * (1 - t**2)  #", "dout * (t**2 - 1)  #")]),
]

CORRECT = [
    [("dout * (1 - t**2)  #", "dout * (1 - np.tanh(x) ** 2)  #")],
    [("dout * (1 - t**2)  #", "dout / np.cosh(x) ** 2  #")],
    [("dout * (1 - t**2)  #", "dout * (1 - t) * (1 + t)  #")],
]
