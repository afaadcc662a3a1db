NO_VAR = ("        dbndiff += 2 * bndiff * dbndiff2  # (N, D), the second use of bndiff\n", "")
NO_MEAN = ("        dx += np.ones_like(dx) / n * dbnmeani  # (N, D)\n", "")

PLANTED = [
    ("accumulated_across_calls", [('self.grads["gamma"] = (dout * bnraw)', 'self.grads["gamma"] += (dout * bnraw)')]),
    ("missing_mean_and_variance_paths", [NO_VAR, NO_MEAN]),
    ("missing_mean_and_variance_paths", [("        return dx\n", "        return dbnraw * bnvar_inv\n")]),
    ("missing_mean_path", [NO_MEAN]),
    ("missing_mean_path", [("        return dx\n", "        return dbndiff\n")]),
    ("missing_variance_path", [NO_VAR]),
    ("missing_variance_path", [("dbndiff += 2 * bndiff * dbndiff2", "dbndiff = bnvar_inv * dbnraw")]),
    ("bessel_mismatch", [("np.ones_like(bndiff2) / n * dbnvar", "np.ones_like(bndiff2) / (n - 1) * dbnvar")]),
    ("bessel_mismatch", [("np.ones_like(bndiff2) / n * dbnvar", "1 / (n - 1) * np.ones_like(bndiff2) * dbnvar")]),
    ("wrong_sign", [("        return dx\n", "        return -dx\n")]),
    ("dbndiff_aliased", [("dx = dbndiff.copy()", "dx = dbndiff")]),
    ("not_summed_over_batch", [("(dout * bnraw).sum(0)  #", "dout * bnraw  #")]),
    ("wrong_sign", [("(dout * bnraw).sum(0)  #", "-(dout * bnraw).sum(0)  #")]),
    ("not_summed_over_batch", [('self.grads["beta"] = dout.sum(0)', 'self.grads["beta"] = dout')]),
    ("wrong_sign", [('self.grads["beta"] = dout.sum(0)', 'self.grads["beta"] = -dout.sum(0)')]),
    ("extra_1_over_n", [('(dout * bnraw).sum(0)  #', '(dout * bnraw).mean(0)  #')]),
    ("extra_1_over_n", [('self.grads["beta"] = dout.sum(0)', 'self.grads["beta"] = dout.mean(0)')]),
]

CORRECT = [
    [("        return dx\n", "        return bnvar_inv / n * (n * dbnraw - dbnraw.sum(0) - bnraw * (dbnraw * bnraw).sum(0))\n")],
    [("dbnmeani = -dbndiff.sum(0)", "dbnmeani = (-dbndiff).sum(0)"),
     ("dx += np.ones_like(dx) / n * dbnmeani", "dx = dx + dbnmeani / n")],
    [("np.ones_like(bndiff2) / n * dbnvar", "np.broadcast_to(dbnvar / n, bndiff2.shape)"),
     ("(dout * bnraw).sum(0)  #", "np.einsum('nd,nd->d', dout, bnraw)  #")],
]
