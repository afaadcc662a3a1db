"""Writing trained models in formats other programs run (ONNX)."""
