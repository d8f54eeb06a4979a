"""Runtime library copied into generated model modules: Keras layers and functions with torch semantics."""
