"""porter.frontend.gluon_namespace: helpers handed Gluon's op namespace (`self.shuffle(F, x)`, `pad(x, F, k)`,
`super().hybrid_forward(F, x)`) read without it, their `F.op(...)` calls still resolving to the op namespace."""

import textwrap

import libcst as cst

from porter.frontend.source import parse_source

SOURCE = '''
from mxnet.gluon import nn


def fixed_padding(inputs, F, kernel_size):
    return F.pad(inputs, mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))


class Base(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.relu(x)


class Net(Base):
    def __init__(self, F=3, **kwargs):
        super(Net, self).__init__(**kwargs)
        self.width = F

    def shuffle(self, F, data, groups):
        return F.reshape(data, shape=(0, -4, groups, -1, -2))

    def hybrid_forward(self, F, x):
        x = super(Net, self).hybrid_forward(F, x)
        return self.shuffle(F, fixed_padding(x, F, 3), groups=2)
'''


def _code(node):
    return cst.Module(body=[]).code_for_node(node)


def test_helpers_take_no_namespace(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(SOURCE))
    source = parse_source(path)
    net = source.classes["Net"]
    forward = _code(net.find_method("forward"))
    assert "def forward(self, x)" in forward
    assert "super(Net, self).forward(x)" in forward
    assert "self.shuffle(fixed_padding(x, 3), groups=2)" in forward
    assert "def shuffle(self, data, groups)" in _code(net.find_method("shuffle"))
    assert "self.width = F" in _code(net.find_method("__init__"))  # __init__'s own F is no namespace
    assert "def fixed_padding(inputs, kernel_size)" in _code(source.functions["fixed_padding"])
    assert source.imports.resolve(cst.parse_expression("F.reshape")) == "mxnet.ndarray.reshape"
