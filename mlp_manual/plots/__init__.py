"""Every figure mlp-manual draws: ``curves`` (per-epoch curves of one run or several, the decision
boundary), ``classes`` (confusion matrix, misclassified images), ``diagnostics`` (gradient flow,
the learning-rate sweep), ``regression`` (predicted against true, the fitted curve), ``graph``
(mlp-explain's computation graph), ``style``, what they share, and ``png``, which writes each
figure as a PNG, atomically, cropped to what is drawn.

Importing any of them selects matplotlib's non-interactive Agg backend here; nothing outside this
package imports matplotlib. The figures are ``matplotlib.figure.Figure`` objects made by
``style.agg_figure`` (on an Agg canvas) and saved with ``png.save``: pyplot, its global figure
list and its import time are never needed.
"""

import matplotlib

matplotlib.use("Agg")
