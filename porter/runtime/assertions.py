"""torch._assert on Keras: a check of Python values (shapes, sizes) raised as torch raises it."""


def torch_assert(condition, message):
    """torch._assert(condition, message): AssertionError when a Python condition is false. Tensor conditions are
    not checked (a traced graph has no Python value to test; torch scripts only assert on sizes)."""
    if isinstance(condition, bool) and not condition:
        raise AssertionError(message)
