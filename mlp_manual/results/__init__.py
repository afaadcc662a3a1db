"""Reading finished runs: evaluating a saved model (mlp-eval), comparing run folders (mlp-plot
legends, the mlp-runs table), and starting a run from another's weights (--init-from)."""
