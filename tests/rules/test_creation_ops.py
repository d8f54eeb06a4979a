"""Property tests of creation rules with no input tensor (porter/rules/tensor_ops.py: logspace, its base, one step,
a falling range, sizes read from the conv's output; zeros/ones/empty given `size=`; `torch.from_numpy` of arrays numpy makes in the forward) against
real torch, eagerly and under XLA."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.common_op_cases import op_family_tests
from tests.rules.op_ports import assert_same_outputs, port, random_input

OPS = {
    "logspace": "y = torch.logspace(-1.0, 1.0, y.shape[3]) * y",
    "logspace_base": "y = y + torch.logspace(0, 3, steps=y.shape[2], base=2).view(1, 1, -1, 1)",
    "logspace_one_step": "y = torch.logspace(2, 3, 1) + y",
    "logspace_falling": "y = torch.logspace(1.5, -0.5, y.shape[3], base=3.0) * y",
    "logspace_keywords": "y = torch.logspace(start=-2, end=2, steps=5, base=10.0)[None, :, None, None] * y[:, :5]",
    # the shape by keyword (timm's beit.py: `torch.zeros(size=(window_area + 1,) * 2, dtype=...)` made a 0-d tensor)
    "zeros_size_keyword": "y = y[:, :1] + torch.zeros(size=(1, 3, 1, 1), dtype=y.dtype)",
    "ones_size_keyword": "y = torch.ones(size=[2, y.shape[1]]) @ y.flatten(2)",
    "empty_size_keyword": "y = y[:, :1] * torch.empty(size=(1, 4, 1, 1)).fill_(0.5)",
}

ported, test_creation_matches_torch = op_family_tests(OPS)


torch.set_num_threads(1)


FROM_NUMPY = '''
import numpy as np
import torch
import torch.nn as nn


class OpModel(nn.Module):
    """PointNet's STN: an identity transform made in numpy, added to the regressed one."""

    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.fc = nn.Linear(4, k * k)

    def forward(self, x):
        y = self.fc(x)
        iden = torch.from_numpy(np.eye(self.k).flatten().astype(np.float32)).view(1, self.k * self.k).repeat(
            x.size(0), 1)
        order = torch.from_numpy(np.arange(self.k - 1, -1, -1))
        return (y + iden).view(-1, self.k, self.k)[:, order] * torch.from_numpy(np.array([2.0], np.float32))
'''


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_from_numpy_matches_torch(tmp_path_factory, batch, seed):
    pair = _from_numpy_port(tmp_path_factory)
    x = random_input(seed, (batch, 4))
    assert_same_outputs(pair, [x], tolerance=1e-6, what="from_numpy")
    assert_same_outputs(pair, [x], tolerance=1e-6, what="from_numpy under XLA", jit=True)


_PORTS = {}


def _from_numpy_port(tmp_path_factory):
    if "from_numpy" not in _PORTS:
        _PORTS["from_numpy"] = port(tmp_path_factory.mktemp("from_numpy"), FROM_NUMPY, input_specs=("4",))
    return _PORTS["from_numpy"]
