"""A trained model: the model file (model.npz) and what it records, loading it, predicting
with it (mlp-predict), and sampling text from it (mlp-sample)."""
