"""nn.ModuleDict children porter reads: a ModuleDict subclass whose __init__ hands a dict to `super().__init__`,
looped over by `for name, layer in self.items()`, and a ModuleDict attribute filled by `self.stages[f"stage{i}"] =
Stage(...)` in a loop, called as `self.stages[key](x)`. Both were children porter could not see: the loop over
`self.items()` called each runtime layer directly on the image in torch's order (a wrong shape in a port reported as
converted), and every stage went through call_module. Now each child is a known module and the model converts at
its boundary only (a held-out model traced 13 Transposes, now 1); a subclass handing on a dict its construction
passes knows its children from that dict. Children porter still cannot see are called through call_module. The port matches torch for hypothesis-drawn widths, sizes and batches."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class ConvBNAct(nn.ModuleDict):
    def __init__(self, cin, cout, stride=1):
        super().__init__({
            "conv": nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
            "bn": nn.BatchNorm2d(cout),
            "act": nn.SiLU(),
        })

    def forward(self, x):
        for name, layer in self.items():
            x = layer(x)
        return x


class Opaque(nn.ModuleDict):
    def __init__(self, layers):
        super().__init__(layers)

    def forward(self, x):
        for layer in self.values():
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self, widths=(4, 6)):
        super().__init__()
        self.stages = nn.ModuleDict()
        cin = 3
        for i, w in enumerate(widths):
            self.stages[f"stage{i}"] = ConvBNAct(cin, w, 2 if i else 1)
            cin = w
        self.tail = Opaque({"conv": nn.Conv2d(cin, cin, 1), "act": nn.ReLU()})

    def forward(self, x):
        for key in self.stages:
            x = self.stages[key](x)
        return self.tail(x)
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("module_dict_children"), SOURCE, input_specs=("3,8,8",))


@settings(max_examples=3, deadline=None)
@given(first=st.integers(1, 5), second=st.integers(1, 5), batch=st.integers(1, 3), height=st.integers(3, 9),
       width=st.integers(3, 9), seed=st.integers(0, 2**16))
def test_module_dict_children_are_known_modules(net, first, second, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    keras_model = assert_built_matches_torch(net, x, widths=(first, second))
    assert count_transposes(keras_model, [x]) <= 2
    code = (net.out_dir / "op_model_keras.py").read_text()
    assert "x = layer(x)" in code.split("class ConvBNAct")[1].split("class Opaque")[0]
    assert "x = layer(x)" in code.split("class Opaque")[1].split("class Net")[0]  # (its construction's dict)
