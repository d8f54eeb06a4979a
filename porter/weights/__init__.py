"""Weight files: safe readers for torch/safetensors and conversion to Keras .weights.h5."""
