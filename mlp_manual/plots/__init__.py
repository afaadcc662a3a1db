"""Every figure mlp-manual draws: ``curves`` (per-epoch curves of one run or several, the decision
boundary), ``classes`` (confusion matrix, misclassified images), ``diagnostics`` (gradient flow,
the learning-rate sweep). PNGs are written atomically.

Importing any of them selects matplotlib's non-interactive Agg backend here, before pyplot is
imported; nothing outside this package imports matplotlib.
"""

import matplotlib

matplotlib.use("Agg")
