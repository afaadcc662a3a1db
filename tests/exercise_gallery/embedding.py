ADD = "np.add.at(dW, x, dout.reshape(len(x), self.context, self.dim))"

PLANTED = [
    ("accumulated_across_calls", [("dW = np.zeros_like(self.params[\"W\"])  # (V, E)", "dW = self.grads[\"W\"]")]),
    ("repeated_rows_overwritten", [(ADD, "dW[x] = dout.reshape(len(x), self.context, self.dim)")]),
    ("repeated_rows_overwritten", [(ADD, "dW[x] += dout.reshape(len(x), self.context, self.dim)")]),
    ("repeated_rows_overwritten", [(ADD, "for n in range(len(x)):\n            for t in range(self.context):\n"
                                         "                dW[x[n, t]] = dout[n, t * self.dim:(t + 1) * self.dim]")]),
    ("wrong_sign", [(ADD, "np.add.at(dW, x, -dout.reshape(len(x), self.context, self.dim))")]),
]

CORRECT = [
    [(ADD, "for n in range(len(x)):\n            for t in range(self.context):\n"
           "                dW[x[n, t]] += dout[n, t * self.dim:(t + 1) * self.dim]")],
    [(ADD, "onehot = np.eye(self.vocab)[x.ravel()]  # (N * T, V)\n"
           "        dW += onehot.T @ dout.reshape(-1, self.dim)")],
    [("        return None\n", "        return\n")],
]
