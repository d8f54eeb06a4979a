"""The Gluon frontend's reading of custom parameters and model-zoo factories (porter/frontend/gluon.py), on small
sources: what the translator sees, without running anything."""

import textwrap

from porter.frontend.source import parse_source

HEADER = """
import os
import mxnet as mx
from mxnet import base, gluon
from mxnet.context import cpu
from mxnet.gluon import nn
"""


def parse(tmp_path, body):
    path = tmp_path / "model.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return parse_source(path)


def code(source, node):
    return source.module.code_for_node(node)


def test_hybrid_forward_reads_its_parameters_from_self(tmp_path):
    source = parse(tmp_path, '''
        class Scale(gluon.HybridBlock):
            def __init__(self, units=4, **kwargs):
                super().__init__(**kwargs)
                self.gamma = self.params.get("gamma", shape=(units,), init="ones")
                self.beta = gluon.Parameter("beta", shape=(units,))
                self.fixed = self.params.get_constant("fixed", mx.nd.ones((units,)))

            def hybrid_forward(self, F, x, *, beta, gamma, fixed=None):
                """Docstring first."""
                return F.broadcast_mul(x, gamma) + beta + fixed
    ''')
    forward = source.classes["Scale"].methods["forward"]
    text = code(source, forward)
    assert "def forward(self, x):" in text
    lines = [line.strip() for line in text.strip().splitlines()]
    assert lines[1] == '"""Docstring first."""'
    assert lines[2:5] == ["beta = self.beta", "gamma = self.gamma", "fixed = self.fixed"]
    init = code(source, source.classes["Scale"].methods["__init__"])
    assert "porter_gluon_params_get__(" in init and "porter_gluon_params_get_constant__(" in init
    assert source.imports.aliases["porter_gluon_params_get__"] == "mxnet.gluon.Parameter"


def test_a_subclass_reads_its_bases_parameters(tmp_path):
    source = parse(tmp_path, '''
        class Base(gluon.HybridBlock):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.weight = self.params.get("weight", shape=(2, 2))

            def hybrid_forward(self, F, x, weight):
                return F.dot(x, weight)

        class Scaled(Base):
            def hybrid_forward(self, F, x, weight):
                return 2 * F.dot(x, weight)
    ''')
    text = code(source, source.classes["Scaled"].methods["forward"])
    assert "def forward(self, x):" in text and "weight = self.weight" in text


def test_parameter_data_reads_as_the_parameter(tmp_path):
    source = parse(tmp_path, '''
        class Gluon2(gluon.Block):
            def __init__(self):
                super().__init__()
                self.weight = self.params.get("weight", shape=(3, 2))

            def forward(self, x):
                return mx.nd.dot(x, self.weight.data()) + self.other.data()
    ''')
    text = code(source, source.classes["Gluon2"].methods["forward"])
    assert "mx.nd.dot(x, self.weight)" in text
    assert "self.other.data()" in text  # not a parameter of this Block: left alone


def test_model_factories_through_tables_and_other_factories(tmp_path):
    source = parse(tmp_path, '''
        class Net(gluon.HybridBlock):
            def __init__(self, block, layers, **kwargs):
                super().__init__(**kwargs)

        class NetV2(Net):
            pass

        class Block(gluon.HybridBlock):
            pass

        spec = {8: [1, 1]}
        versions = [Net, NetV2]
        blocks = [{"basic": Block}]

        def get_net(version, num_layers, pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), "m"),
                    **kwargs):
            net_class = versions[version - 1]
            net = net_class(blocks[version - 1]["basic"], spec[num_layers], **kwargs)
            if pretrained:
                from mxnet.gluon.model_zoo.model_store import get_model_file
                net.load_parameters(get_model_file("net"), ctx=ctx)
            return net

        def net8(**kwargs):
            kwargs["x"] = 1
            return get_net(1, 8, **kwargs)

        def net8_v2(**kwargs):
            return get_net(2, 8, **kwargs)

        def train(net, data):
            with mx.autograd.record():
                loss = net(data)
            loss.backward()
            return net

        def not_a_factory(n):
            return [Net(Block, [n])]

        def ready_net(ctx=mx.cpu()):
            net = Net(Block, [1])
            net.initialize(mx.init.Xavier(), ctx=ctx)
            net.hybridize()
            return net
    ''')
    # the class a table offers first, or the one the literal arguments pick (`get_net(2, ...)`: versions[1])
    assert source.factories == {"get_net": "Net", "net8": "Net", "net8_v2": "NetV2", "ready_net": "Net"}
    ready = code(source, source.functions["ready_net"])
    assert "def ready_net(ctx=None):" in ready and "initialize" not in ready and "hybridize" not in ready
    assert {"get_net", "net8", "spec", "versions", "blocks"} <= source.model_names
    assert "train" not in source.model_names
    text = code(source, source.functions["get_net"])
    assert "ctx=None, root=None" in text and "get_model_file" not in text
    assert "raise NotImplementedError(" in text


def test_literal_array_gives_an_example_input(tmp_path):
    from porter.frontend.training_code import read_training_code

    source = parse(tmp_path, '''
        class Tagger(gluon.HybridBlock):
            def hybrid_forward(self, F, tokens, lengths):
                return tokens

        if __name__ == "__main__":
            net = Tagger()
            net(mx.nd.array([[1, 5, 2], [7, 0, 3]], dtype="int32"), mx.nd.array([3, 1]))
    ''')
    main, examples = read_training_code(source)
    assert main == "Tagger"
    tokens, lengths = examples["Tagger"]
    assert (tokens.shape, tokens.dtype, tokens.low, tokens.high) == ([3], "int32", 0, 8)
    assert (lengths.shape, lengths.dtype, lengths.low, lengths.high) == ([], "float32", 1.0, 3.0)
