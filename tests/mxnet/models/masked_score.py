"""An attention score written the way GluonNLP 0.10 writes it (attention_cell.py): a mask value chosen by mxnet's
AMP switch and applied with F.where, a layer class defined inside `__init__` for one option, `F == mx.nd` guarding
an imperative-only shape check, `isinstance(act, gluon.Block)` and `isinstance(states, ndarray.NDArray)`."""

import mxnet as mx
import numpy as np
from mxnet import gluon, ndarray
from mxnet.contrib.amp import amp
from mxnet.gluon import HybridBlock, nn


def _apply_mask(F, score, mask, dtype=np.float32):
    neg = -1e18
    if np.dtype(dtype) == np.float16:
        neg = -1e4
    else:
        if amp._amp_initialized:
            neg = -1e4
    return F.where(mask, score, neg * F.ones_like(score))


class MaskedScore(HybridBlock):
    def __init__(self, units, act=None, normalized=False, prefix=None, params=None):
        class _NormalizedProjection(HybridBlock):
            def hybrid_forward(self, F, x):
                return F.L2Normalization(x, mode="instance")

        super().__init__(prefix=prefix, params=params)
        self._units = units
        act = act if act is not None else nn.Activation("tanh")
        assert isinstance(act, gluon.Block)
        with self.name_scope():
            self.act = act
            self.proj = _NormalizedProjection() if normalized else nn.Dense(units, flatten=False, in_units=units)

    def hybrid_forward(self, F, x, mask):
        if F == mx.nd:
            assert x.shape[-1] == self._units, "units do not match"
        states = x
        if isinstance(states, ndarray.NDArray):
            states = [states]
        score = F.softmax(_apply_mask(F, self.act(self.proj(states[0])), mask), axis=-1)
        return score
