"""Rule: `mx.autograd.is_training()` in a Gluon block's forward -> the port's `training` argument (Keras passes it
to `call`; None outside fit counts as inference, as mxnet's is_training() is False outside `autograd.record`).
GluonCV's DropBlock returns its input unchanged unless training: the port keeps that branch a Python `if`."""

from porter.ir.values import python
from porter.rules.registry import function_rule


def translate_is_training(ctx, call):
    """`bool(training)`: the training flag `call` received."""
    return python("bool(training)")


function_rule("mxnet.autograd.is_training", translate=translate_is_training, layout="any")
