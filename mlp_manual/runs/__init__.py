"""A run's life: its folder and lock, start, checkpoints, signals, warnings, the metrics and
events it writes as it goes, and the finish that writes the model, the plots and summary.json."""
