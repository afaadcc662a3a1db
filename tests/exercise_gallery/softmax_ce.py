PLANTED = [
    ("missing_1_over_n", [("    dlogits /= n\n", "")]),
    ("missing_1_over_n", [("dlogits /= n", "dlogits = dlogits")]),
    ("onehot_not_subtracted", [("    dlogits[rows, y] -= 1\n", "")]),
    ("onehot_not_subtracted", [("dlogits[rows, y] -= 1", "dlogits[rows, y] -= 0")]),
    ("wrong_sign", [("dlogits /= n", "dlogits /= -n")]),
    ("wrong_sign", [("dlogits = p.copy()", "dlogits = -p"), ("dlogits[rows, y] -= 1", "dlogits[rows, y] += 1")]),
    ("divided_by_n_times_c", [("dlogits /= n", "dlogits /= logits.size")]),
    ("divided_by_n_times_c", [("dlogits /= n", "dlogits /= n * logits.shape[1]")]),
    ("extra_1_over_n", [("dlogits /= n", "dlogits /= n * n")]),
    ("missing_1_over_n", [(".mean())", ".sum())")]),
    ("wrong_sign", [("float(-np.log(", "float(np.log(")]),
]

CORRECT = [
    [("z = logits - logits.max(axis=1, keepdims=True)", "z = logits")],
    [("dlogits = p.copy()", "dlogits = p - np.eye(logits.shape[1])[y]"), ("    dlogits[rows, y] -= 1\n", "")],
    [("loss = float(-np.log(p[rows, y]).mean())",
      "loss = float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[rows, y]))")],
]
