"""resnext_features' Lambda containers: `LambdaMap(fn, *children)`, `LambdaReduce(fn)`, `Lambda(fn)` subclass a
`LambdaBase(nn.Sequential)` that takes its children as `*args` and its function as `fn` (a lambda per construction),
and run `self.lambda_func(...)`, `map(self.lambda_func, ...)` or `reduce(self.lambda_func, ...)` over the results of
`self._modules.values()`. The model is an nn.Sequential built at module level that a class holds.

What each construction hands is read: the children every construction passes to `*args` (none for `LambdaReduce`,
whose loop over its children then never runs), the lambdas (`x`, `x + y`: the same code in any layout, so the
instance's own function runs on images as they are held, passes/function_attributes.py), and the module-level
Sequential the class holds (its chain followed like an attribute's). The port converts only at its boundary and
matches torch (eager and XLA) for hypothesis-drawn sizes, batches and weights.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
from functools import reduce

import torch
import torch.nn as nn


class LambdaBase(nn.Sequential):
    def __init__(self, fn, *args):
        super(LambdaBase, self).__init__(*args)
        self.lambda_func = fn

    def forward_prepare(self, input):
        output = []
        for module in self._modules.values():
            output.append(module(input))
        return output if output else input


class Lambda(LambdaBase):
    def forward(self, input):
        return self.lambda_func(self.forward_prepare(input))


class LambdaMap(LambdaBase):
    def forward(self, input):
        return list(map(self.lambda_func, self.forward_prepare(input)))


class LambdaReduce(LambdaBase):
    def forward(self, input):
        return reduce(self.lambda_func, self.forward_prepare(input))


features = nn.Sequential(
    nn.Conv2d(3, 8, 3, 1, 1, bias=False),
    nn.BatchNorm2d(8),
    nn.ReLU(),
    nn.Sequential(
        nn.Sequential(
            LambdaMap(lambda x: x,
                      nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, groups=2, bias=False), nn.BatchNorm2d(8), nn.ReLU()),
                      Lambda(lambda x: x)),
            LambdaReduce(lambda x, y: x + y),
            nn.ReLU(),
        ),
        nn.Sequential(
            LambdaMap(lambda x: x,
                      nn.Sequential(nn.Conv2d(8, 12, 3, 2, 1, bias=False), nn.BatchNorm2d(12)),
                      nn.Sequential(nn.Conv2d(8, 12, 1, 2, bias=False), nn.BatchNorm2d(12))),
            LambdaReduce(lambda x, y: x + y),
            nn.ReLU(),
        ),
    ),
)


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = features
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.last_linear = nn.Linear(12, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = self.pool(x)
        x = x.view(x.size(0), -1)
        return self.last_linear(x)
'''

@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> output folder of the snippet's port (Net's defaults)."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,16,16")


@settings(max_examples=2, deadline=None)
@given(batch=st.integers(1, 2), size=st.integers(4, 12), seed=st.integers(0, 2**16))
def test_lambda_containers_match_torch_and_convert_only_at_the_boundary(ported, batch, size, seed):
    pair = PortedPair(ported("lambdas"), seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_matches_converting_at_the_boundary(pair, x)


def test_the_containers_run_their_functions_on_images_as_held(ported):
    code = (ported("lambdas") / "op_model_keras.py").read_text()
    assert "return list(map(self.lambda_func, self.forward_prepare(input, training=training)))" in code
    assert "return reduce(self.lambda_func, self.forward_prepare(input, training=training))" in code
    assert "to_channels_first" not in code.split("class LambdaMap")[1].split("class LambdaReduce")[0]
