"""porter.frontend.gluon: Gluon Blocks found however imported, hybrid_forward read as forward without `F`,
`name_scope` blocks unwrapped (source lines kept), `F` resolved to the op namespace."""

import textwrap

import libcst as cst
import pytest

from porter.frontend.source import parse_source

IMPORT_STYLES = {
    "gluon.HybridBlock": "from mxnet import gluon\n",
    "gluon.Block": "from mxnet import gluon\n",
    "nn.HybridBlock": "from mxnet.gluon import nn\n",
    "HybridBlock": "from mxnet.gluon.block import HybridBlock\n",
    "mxnet.gluon.block.HybridBlock": "import mxnet\n",
    "mx.gluon.nn.HybridBlock": "import mxnet as mx\n",
    "gluon.nn.HybridBlock": "from mxnet import gluon\n",
}


def parsed(tmp_path, text):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(text))
    return parse_source(path)


@pytest.mark.parametrize("base", sorted(IMPORT_STYLES))
def test_blocks_are_found_however_imported(tmp_path, base):
    source = parsed(tmp_path, IMPORT_STYLES[base] + f"\n\nclass Net({base}):\n    pass\n")
    assert list(source.classes) == ["Net"]
    assert source.framework == "mxnet" and source.classes["Net"].framework == "mxnet"


def test_hybrid_forward_is_forward_without_f_and_name_scopes_are_unwrapped(tmp_path):
    source = parsed(tmp_path, '''
        from mxnet.gluon import nn


        class Net(nn.HybridBlock):
            def __init__(self, **kwargs):
                super(Net, self).__init__(**kwargs)
                with self.name_scope():
                    self.features = nn.HybridSequential(prefix="")
                    with self.features.name_scope():
                        self.features.add(nn.Dense(4), nn.Dense(2))

            def hybrid_forward(self, F, x, y):
                return F.relu(self.features(x)) + y
        ''')
    info = source.classes["Net"]
    assert set(info.methods) == {"__init__", "forward"}
    forward = info.find_method("forward")
    assert [p.name.value for p in forward.params.params] == ["self", "x", "y"]
    assert source.line_of(forward) == 13
    init = source.code_of(info.methods["__init__"])
    assert "name_scope" not in init and "self.features.add(nn.Dense(4), nn.Dense(2))" in init
    statements = info.methods["__init__"].body.body
    assert [source.line_of(s) for s in statements] == [7, 9, 11]
    relu = forward.body.body[0].body[0].value.left.func
    assert isinstance(relu, cst.Attribute) and source.imports.resolve(relu) == "mxnet.ndarray.relu"


def test_gluon_2_forward_is_kept_and_torch_sources_stay_torch(tmp_path):
    gluon_source = parsed(tmp_path, '''
        from mxnet.gluon import nn


        class Net(nn.Block):
            def forward(self, x):
                return x
        ''')
    assert [p.name.value for p in gluon_source.classes["Net"].methods["forward"].params.params] == ["self", "x"]
    torch_source = parsed(tmp_path, '''
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                return x
        ''')
    assert torch_source.framework == "torch"
