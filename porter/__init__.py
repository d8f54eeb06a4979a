"""porter: port PyTorch model code to readable TensorFlow/Keras that trains on Cloud TPUs."""

__version__ = "0.1.0"
