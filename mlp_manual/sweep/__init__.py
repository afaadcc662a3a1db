"""Hyperparameter sweeps on Optuna (``mlp-sweep``): ``spec`` reads the sweep file, ``storage``
opens the study's journal file (read and written with checks by ``journal``) or database,
``study`` creates or joins the study and seeds its sampler, ``worker`` trains trials as ordinary
runs, ``takeover`` continues the trials of workers that are gone (``liveness`` tells, on this
machine), ``folder`` keeps the sweep folder's record and says which run folders a worker may take
over, ``reporting`` feeds their epochs to the pruner, ``table`` and ``figures`` show what the
study holds.

Optuna is an optional dependency (``pip install "mlp-manual[sweep]"``); nothing outside this
package imports it.
"""
