"""scikit-learn's callbacks (``set_callbacks``, with its ``ProgressBar`` and ``ScoringMonitor``)
during a fit: the fit is one task, each epoch (each L-BFGS iteration) a subtask, and a
callback that asks to stop at the end of an epoch stops training there.

A callback that scores the model mid-fit is given a copy of the estimator with its own copy of
the network as it is at that moment; the copies are made only where callbacks are set.
"""

from .network import linears, network_copy


class EpochHooks:
    """The callback contexts of one fit on X, y (``max_epochs`` subtasks at most)."""

    def __init__(self, est, X, y, sample_weight, max_epochs: int):
        self.est, self.X, self.y = est, X, y
        self.metadata = None if sample_weight is None else {"sample_weight": sample_weight}
        self.active = bool(getattr(est, "_skl_callbacks", None))
        self.fit = est._init_callback_context(max_subtasks=max_epochs)
        self.fit.call_on_fit_task_begin(estimator=est, X=X, y=y, metadata=self.metadata)
        self.epoch = None

    def _snapshot(self) -> dict:
        """What makes a copy of the estimator predict as the network does now."""
        if not self.active:
            return {}
        model = network_copy(self.est.model_, arrays=True)
        return {"model_": model, "coefs_": [layer.params["W"] for layer in linears(model)],
                "intercepts_": [layer.params["b"] for layer in linears(model)]}

    def begin(self) -> None:
        self.epoch = self.fit.subcontext(task_name="epoch")
        self.epoch.call_on_fit_task_begin(estimator=self.est, X=self.X, y=self.y, metadata=self.metadata,
                                          reconstruction_attributes=self._snapshot())

    def end(self) -> bool:
        """End the epoch; whether a callback asks to stop."""
        epoch, self.epoch = self.epoch, None  # ended, even where a callback raises
        stop = epoch.call_on_fit_task_end(estimator=self.est, X=self.X, y=self.y, metadata=self.metadata,
                                          reconstruction_attributes=self._snapshot())
        return bool(stop)

    def close(self) -> None:
        """End an epoch left open (one L-BFGS never ran, an interrupted one), then the fit."""
        if self.epoch is not None:
            self.epoch.call_on_fit_task_end(estimator=self.est)
        self.fit.call_on_fit_task_end(estimator=self.est, X=self.X, y=self.y, metadata=self.metadata,
                                      reconstruction_attributes=self._snapshot())
