"""Hyperparameter sweeps on Optuna (``mlp-sweep``): ``spec`` reads the sweep file, ``storage``
opens the study's journal file or database, ``study`` creates or joins the study and seeds its
sampler, ``worker`` trains trials as ordinary runs, ``reporting`` feeds their epochs to the
pruner, ``folder`` keeps the sweep folder's record and says which run folders a worker may take
over, ``table`` and ``figures`` show what the study holds.

Optuna is an optional dependency (``pip install "mlp-manual[sweep]"``); nothing outside this
package imports it.
"""
