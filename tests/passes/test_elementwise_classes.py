"""porter.passes.elementwise_classes: in-file classes whose forward is elementwise (GluonCV's ReLU6, HardSigmoid,
HardSwish) pass any layout through; a reshape, an axis or a non-elementwise attribute makes a class not so."""

import textwrap

from porter.frontend.source import parse_source
from porter.passes.elementwise_classes import is_elementwise_class
from porter.rules.registry import load_all_rules

SOURCE = '''
from mxnet.gluon import nn
from mxnet.gluon.block import HybridBlock


class ReLU6(HybridBlock):
    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6)


class HardSigmoid(HybridBlock):
    def __init__(self, **kwargs):
        super(HardSigmoid, self).__init__(**kwargs)
        self.act = ReLU6()

    def hybrid_forward(self, F, x):
        return self.act(x + 3.0) / 6.0


class HardSwish(HybridBlock):
    def __init__(self, **kwargs):
        super(HardSwish, self).__init__(**kwargs)
        self.act = HardSigmoid()

    def hybrid_forward(self, F, x):
        return x * self.act(x)


class Squash(HybridBlock):
    def hybrid_forward(self, F, x):
        return F.reshape(x, shape=(0, -1))


class Norm(HybridBlock):
    def hybrid_forward(self, F, x):
        return x / F.sum(x, axis=1, keepdims=True)


class Convolved(HybridBlock):
    def __init__(self, **kwargs):
        super(Convolved, self).__init__(**kwargs)
        self.conv = nn.Conv2D(4, 3)

    def hybrid_forward(self, F, x):
        return F.relu(self.conv(x))
'''


def test_elementwise_classes(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(SOURCE))
    source = parse_source(path)
    module_rules, function_rules = load_all_rules()
    verdicts = {name: is_elementwise_class(source, module_rules, function_rules, name) for name in source.classes}
    assert verdicts == {"ReLU6": True, "HardSigmoid": True, "HardSwish": True, "Squash": False, "Norm": False,
                        "Convolved": False}
