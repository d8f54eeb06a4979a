"""Factories that change the user's keyword arguments before building (porter/frontend/factory_reader.py,
factory_values.py, model_entry.py), as timm's files do: `kwargs["growth_rate"] = growth_rate` (densenet.py), a
local read by `kwargs.get(key, default)` deciding an `if` (inception_v3.py), a library helper that pops from them
and whose result only weight loading reads (inception_v3.py's `resolve_pretrained_cfg`), `model_kwargs.update(kwargs)`
on a `dict(...)` (tiny_vit.py), and `dict(model_cfgs[variant], **kwargs)` of a table of literal configurations
(levit.py), a construction inside `with load_context:` (iformer.py). Each was refused (`--class densenet121` ...: "porter cannot follow which module class ... builds"); each
is now followed, and the port the CLI writes from such a factory matches torch."""

import textwrap

import numpy as np
import pytest

from porter.frontend.model_entry import model_entry
from tests.frontend.test_model_entry import parsed


def test_a_keyword_set_on_the_users_arguments(tmp_path):
    source = parsed(tmp_path, '''
        def _create(layers, width, **kwargs):
            kwargs["width"] = width
            kwargs["num_classes"] = 7
            return Net(Block, layers, **kwargs)


        def net_w6(**kwargs):
            return _create([1, 2], 6, **kwargs)
    ''')
    entry = model_entry(source, "net_w6")
    assert entry is not None and entry.class_name == "Net" and entry.takes_kwargs
    assert set(entry.arguments) == {"Block", "[1, 2]", "width=6", "num_classes=7"}


def test_a_condition_on_a_local_read_from_the_keywords_and_a_library_helper(tmp_path):
    source = parsed(tmp_path, '''
        from somelib.pretrained import resolve_cfg


        def _create(variant, **kwargs):
            cfg = resolve_cfg(variant, cfg=kwargs.pop("pretrained_cfg", None))
            deep = kwargs.get("deep", False)
            if deep:
                layers = [3, 3]
            else:
                layers = [1, 1]
            return Net(Block, layers, **kwargs)


        def net(**kwargs):
            return _create("net", **kwargs)
    ''')
    entry = model_entry(source, "net")
    assert entry is not None and entry.arguments == ("Block", "[1, 1]")
    statements = "\n".join(entry.statements)
    assert "kwargs.pop('pretrained_cfg', None)" in statements and "resolve_cfg" not in statements
    assert "raise TypeError" in statements  # the other branch (deep=True) is refused, not built wrong


def test_keywords_merged_into_a_dict_call_and_a_table_of_literal_configurations(tmp_path):
    source = parsed(tmp_path, '''
        model_cfgs = dict(
            net_a=dict(layers=[1], width=2),
            net_b=dict(layers=[2, 2], width=8),
        )


        def _create(variant, **kwargs):
            return Net(Block, **dict(model_cfgs[variant], **kwargs))


        def net_b(**kwargs):
            return _create("net_b", **kwargs)


        def net_small(**kwargs):
            model_kwargs = dict(layers=[1, 1], width=3)
            model_kwargs.update(kwargs)
            return Net(Block, **model_kwargs)
    ''')
    entry = model_entry(source, "net_b")
    assert entry is not None and entry.class_name == "Net"
    assert set(entry.defaults) == {'"layers": [2, 2]', '"width": 8'}  # the user's keywords win, as in the source
    small = model_entry(source, "net_small")
    assert small is not None and set(small.defaults) == {'"layers": [1, 1]', '"width": 3'}


def test_a_construction_inside_a_with_block(tmp_path):
    """timm's iformer.py: `with load_context: return build_model_with_cfg(...)`, the context only for loading
    pretrained weights."""
    source = parsed(tmp_path, '''
        from contextlib import nullcontext


        def _create(pretrained=False, **kwargs):
            load_context = nullcontext()
            if pretrained:
                load_context = open("weights.lock")
            with load_context:
                return Net(Block, [1, 2], **kwargs)


        def net(pretrained=False, **kwargs):
            return _create(pretrained, **dict(dict(width=6), **kwargs))
    ''')
    entry = model_entry(source, "net")
    assert entry is not None and entry.class_name == "Net" and entry.defaults == ('"width": 6',)


SOURCE = '''
import torch.nn as nn

from somelib.pretrained import resolve_cfg


class Net(nn.Module):
    def __init__(self, layers, growth=4, num_classes=10):
        super().__init__()
        blocks, width = [], 3
        for _ in range(sum(layers)):
            blocks += [nn.Conv2d(width, width + growth, 3, padding=1), nn.ReLU()]
            width += growth
        self.features = nn.Sequential(*blocks)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


model_cfgs = dict(net_a=dict(layers=(1, 1)), net_b=dict(layers=(1, 2)))


def _create(variant, growth, **kwargs):
    kwargs["growth"] = growth
    cfg = resolve_cfg(variant, cfg=kwargs.pop("pretrained_cfg", None))
    return Net(**dict(model_cfgs[variant], **kwargs))


def net_b(**kwargs):
    model_kwargs = dict(num_classes=5)
    model_kwargs.update(kwargs)
    return _create("net_b", 6, **model_kwargs)
'''


def test_the_port_of_such_a_factory_matches_torch(tmp_path):
    from porter.cli import main
    from porter.verify.harness import PortedPair
    from tests.rules.op_ports import assert_same_outputs

    path = tmp_path / "nets.py"
    path.write_text(textwrap.dedent(SOURCE))
    (tmp_path / "somelib").mkdir()  # (the library the source imports: torch's side needs it to import the file)
    (tmp_path / "somelib" / "__init__.py").write_text("")
    (tmp_path / "somelib" / "pretrained.py").write_text("def resolve_cfg(variant, cfg=None):\n    return cfg\n")
    out = tmp_path / "out"
    assert main(["convert", str(path), "-o", str(out), "--class", "net_b", "--input-shape", "3,8,8"]) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(tmp_path))
        pair = PortedPair(out)
        assert tuple(pair.torch_model.head.weight.shape) == (5, 3 + 6 * 3)
        x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
        assert_same_outputs(pair, [x], tolerance=1e-5, what="net_b")


# timm's efficientnet.py, as small: a builder module beside the model file holds a constant and a helper popping
# from the keyword arguments; a variant sets a default from the sibling's constant (`kwargs.setdefault('bn_eps',
# BN_EPS_TF_DEFAULT)`: refused, a sibling's definition the port lacked), another hands a norm layer the helper pops
# again (`kwargs.pop('norm_layer', None) or ...` on keyword arguments the caller added to: refused as unread).
BUILDER = '''
import torch.nn as nn

EPS_TF = 1e-3


def resolve_bn_args(kwargs):
    eps = kwargs.pop("bn_eps", None)
    return {} if eps is None else {"eps": eps}
'''

EFFNET = '''
from functools import partial

import torch.nn as nn

from .builder import EPS_TF, resolve_bn_args


class Net(nn.Module):
    def __init__(self, width=4, norm_layer=nn.BatchNorm2d, num_classes=3):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.norm = norm_layer(width)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.norm(self.conv(x)).mean((2, 3)))


def _gen(width, **kwargs):
    model_kwargs = dict(
        width=width,
        norm_layer=kwargs.pop("norm_layer", None) or partial(nn.BatchNorm2d, **resolve_bn_args(kwargs)),
        **kwargs,
    )
    return Net(**model_kwargs)


def net_tf(**kwargs):
    kwargs.setdefault("bn_eps", EPS_TF)
    return _gen(6, **kwargs)


def net_gn(**kwargs):
    return _gen(4, norm_layer=partial(nn.GroupNorm, 2), **kwargs)
'''


@pytest.mark.parametrize("factory, built", [("net_tf", "EPS_TF = 1e-3"), ("net_gn", "partial(GroupNorm, 2)")])
def test_a_siblings_constant_and_a_key_the_caller_added(tmp_path, factory, built):
    from porter.cli import main

    package = tmp_path / "effnets"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "builder.py").write_text(textwrap.dedent(BUILDER))
    (package / "model.py").write_text(textwrap.dedent(EFFNET))
    out = tmp_path / "out"
    assert main(["convert", str(package / "model.py"), "-o", str(out), "--class", factory, "--input-shape",
                 "3,6,5"]) == 0
    assert built in (out / "model_keras.py").read_text()
    assert main(["verify", str(out), "--examples", "1"]) == 0  # (torch's side imported as the package's module)
