"""Where an estimator trains: its ``device`` (devices.py).

On the CPU the network's parameters are views of one Flat vector from the first epoch to the
last, and ``coefs_`` are those views. On a device the network moves there for each epoch, as a
Flat of the device's arrays, and back after it, so that what reads it between epochs (the
scores of early stopping and of callbacks, ``coefs_``) reads numpy; the solver's state moves
there for the fit and back after it, so that a fitted estimator holds no array of the device.
"""

from contextlib import contextmanager

from ..devices import HOST, Device, device, move_model
from .flat import Flat


def check_device(est, X) -> None:
    """Before a fit changes anything: DeviceError when ``est.device`` cannot be used, and a
    ValueError for what trains on the CPU alone (solver 'lbfgs', sparse X)."""
    if est.device == "cpu":
        return
    device(est.device).namespace()
    if est.solver == "lbfgs":
        raise ValueError(f"solver='lbfgs' runs SciPy's L-BFGS-B, on the CPU: use device='cpu', or a stochastic solver "
                         f"('sgd', 'adam', 'adamw', 'rmsprop') on device={est.device!r}")
    if hasattr(X, "tocsr"):
        raise ValueError(f"device={est.device!r} trains on dense X: pass X.toarray(), or use device='cpu' for "
                         "sparse input")


class Placement:
    """The network and the solver of ``est`` on ``dev`` while a fit trains; ``close()`` ends it."""

    def __init__(self, est, dev: Device):
        self.est, self.device = est, dev
        if dev.on_host:
            self.flat = Flat(est.model_)  # coefs_ and intercepts_ become views of flat.theta
            est._read_back()
        else:
            est._optimizer.place(dev)

    @contextmanager
    def epoch(self):
        """The Flat vector an epoch trains."""
        if self.device.on_host:
            yield self.flat
            return
        try:
            move_model(self.est.model_, self.device)
            yield Flat(self.est.model_)
        finally:  # however the epoch ended (Ctrl-C, a device out of memory)
            move_model(self.est.model_, HOST)
            self.est._read_back()

    def close(self) -> None:
        if not self.device.on_host:
            self.est._optimizer.place(HOST)
