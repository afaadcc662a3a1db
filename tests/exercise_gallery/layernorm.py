PLANTED = [
    ("accumulated_across_calls", [('self.grads["gamma"] = (dout * xhat)', 'self.grads["gamma"] += (dout * xhat)')]),
    ("normalised_over_wrong_axis", [("dxhat.mean(axis=1, keepdims=True)", "dxhat.mean(axis=0, keepdims=True)"),
                                    ("(dxhat * xhat).mean(axis=1, keepdims=True)", "(dxhat * xhat).mean(axis=0, keepdims=True)")]),
    ("normalised_over_wrong_axis", [("dxhat.mean(axis=1, keepdims=True)", "dxhat.mean(axis=0)"),
                                    ("(dxhat * xhat).mean(axis=1, keepdims=True)", "(dxhat * xhat).mean(axis=0)")]),
    ("missing_mean_and_variance_paths", [("return rstd * (dxhat - dmean - xhat * dvar)", "return dxhat * rstd")]),
    ("missing_mean_and_variance_paths", [("return rstd * (dxhat - dmean - xhat * dvar)", "return rstd * dxhat")]),
    ("missing_variance_path", [("return rstd * (dxhat - dmean - xhat * dvar)", "return rstd * (dxhat - dmean)")]),
    ("missing_variance_path", [("return rstd * (dxhat - dmean - xhat * dvar)", "return rstd * dxhat - rstd * dmean")]),
    ("wrong_sign", [("return rstd * (dxhat - dmean - xhat * dvar)", "return rstd * (dmean + xhat * dvar - dxhat)")]),
    ("not_summed_over_batch", [("(dout * xhat).sum(axis=0)  #", "dout * xhat  #")]),
    ("wrong_sign", [("(dout * xhat).sum(axis=0)  #", "-(dout * xhat).sum(axis=0)  #")]),
    ("not_summed_over_batch", [('self.grads["beta"] = dout.sum(axis=0)', 'self.grads["beta"] = dout')]),
    ("not_summed_over_batch", [('self.grads["beta"] = dout.sum(axis=0)', 'self.grads["beta"] = dout.copy()')]),
    ("wrong_sign", [('self.grads["beta"] = dout.sum(axis=0)', 'self.grads["beta"] = -dout.sum(axis=0)')]),
    ("extra_1_over_n", [('(dout * xhat).sum(axis=0)  #', '(dout * xhat).mean(axis=0)  #')]),
    ("extra_1_over_n", [('self.grads["beta"] = dout.sum(axis=0)', 'self.grads["beta"] = dout.mean(axis=0)')]),
]

CORRECT = [
    [("return rstd * (dxhat - dmean - xhat * dvar)",
      "d = dxhat.shape[1]\n        return rstd / d * (d * dxhat - dxhat.sum(axis=1, keepdims=True) "
      "- xhat * (dxhat * xhat).sum(axis=1, keepdims=True))")],
    [("(dout * xhat).sum(axis=0)  #", "np.einsum('nd,nd->d', dout, xhat)  #")],
    [('self.grads["beta"] = dout.sum(axis=0)', 'self.grads["beta"] = np.ones(len(dout)) @ dout')],
]
