PLANTED = [
    ("accumulated_across_calls", [('self.grads["W"] = x.T @ dout', 'self.grads["W"] += x.T @ dout')]),
    ("transposed", [("x.T @ dout  #", "dout.T @ x  #")]),
    ("wrong_sign", [("x.T @ dout  #", "-(x.T @ dout)  #")]),
    ("extra_1_over_n", [("x.T @ dout  #", "x.T @ dout / len(x)  #")]),
    ("bias_not_summed", [("dout.sum(axis=0)", "dout[0]")]),
    ("bias_wrong_axis", [("dout.sum(axis=0)", "dout.sum(axis=1)")]),
    ("extra_1_over_n", [("dout.sum(axis=0)", "dout.mean(axis=0)")]),
    ("bias_as_dout", [("dout.sum(axis=0)", "dout")]),
    ("wrong_sign", [("dout.sum(axis=0)", "-dout.sum(axis=0)")]),
    ("wrong_sign", [("return dout @", "return -dout @")]),
    ("transposed", [('return dout @ self.params["W"].T', 'return (dout @ self.params["W"].T).T')]),
]

CORRECT = [
    [("x.T @ dout  #", "np.einsum('nd,nh->dh', x, dout)  #")],
    [("dout.sum(axis=0)", "np.ones(len(dout)) @ dout")],
    [('return dout @ self.params["W"].T', 'return np.dot(dout, self.params["W"].transpose())')],
]
