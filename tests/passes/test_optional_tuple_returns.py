"""A tuple item that one path leaves None, returned inside another tuple (HF GPT-2's attention: `present = (key,
value)` under `if use_cache is True:`, else None, then `outputs = (attn_output, present)` returned): its pending
permutes are made only where it is a tuple, read through `outputs[1]`. Before, the conversion read `present[0]`
unguarded and the port raised "'NoneType' object is not subscriptable" whenever the cache was off. Matches torch
with the cache off and on, eagerly and under XLA."""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 8)

    def forward(self, x, use_cache=False):
        b, t, c = x.shape
        k = self.qkv(x).view(b, t, 2, 4).permute(0, 2, 1, 3)
        v = k * 2
        if use_cache is True:
            present = (k, v)
        else:
            present = None
        y = (k @ v.transpose(-1, -2)).softmax(-1) @ v
        out = y.permute(0, 2, 1, 3).reshape(b, t, c)
        outputs = (out, present)
        return outputs


class Net(nn.Module):
    def __init__(self, use_cache=False):
        super().__init__()
        self.use_cache = use_cache
        self.attn = Attention()

    def forward(self, x):
        out, present = self.attn(x, use_cache=self.use_cache)
        if present is None:
            return out
        return out + present[0].sum(1).mean(-1, keepdim=True)
'''


@pytest.mark.parametrize("use_cache", [False, True])
def test_optional_tuple_inside_a_returned_tuple(tmp_path_factory, use_cache):
    pair = PortedPair(snippet_ports(tmp_path_factory, SOURCE, "5,8", "use_cache")(use_cache), seed=1)
    for batch in (1, 2):
        x = random_input(batch, (batch, 5, 8))
        assert_same_outputs(pair, [x], tolerance=1e-5)
        assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
