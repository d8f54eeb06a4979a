"""torch.autograd.Function on TensorFlow: `apply` runs the static forward under tf.custom_gradient, backward gives
the gradients of the tensor arguments (None for the others, as torch allows)."""

import tensorflow as tf


class FunctionContext:
    """torch's `ctx` of a custom autograd function: free attributes, save_for_backward/saved_tensors,
    needs_input_grad; the materialisation and non-differentiability hints are accepted and have no effect."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    @property
    def saved_variables(self):
        """torch's old name for saved_tensors (EfficientDet's SwishImplementation reads it)."""
        return self.saved_tensors

    def mark_non_differentiable(self, *outputs):
        pass

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass


class AutogradFunction:
    """Base of ported `torch.autograd.Function` subclasses: `Cls.apply(*args)` as in torch."""

    @classmethod
    def apply(cls, *args):
        positions = [i for i, a in enumerate(args) if tf.is_tensor(a) or isinstance(a, tf.Variable)]
        ctx = FunctionContext(tuple(i in positions for i in range(len(args))))

        @tf.custom_gradient
        def run(*tensors):
            full = list(args)
            for position, value in zip(positions, tensors, strict=True):
                full[position] = value
            output = cls.forward(ctx, *full)

            def gradient(*upstream, variables=None):
                grads = cls.backward(ctx, *upstream)
                grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
                inputs = [grads[p] if p < len(grads) and grads[p] is not None else tf.zeros_like(full[p])
                          for p in positions]
                if variables:  # forward read variables it was not handed: torch gives them no gradient either
                    return inputs, [tf.zeros_like(v) for v in variables]
                return inputs

            return output, gradient

        return run(*[args[p] for p in positions])
