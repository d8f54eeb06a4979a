"""Module-level constants a factory's conditions read (frontend/module_constants.py): timm's vision_transformer.py
decides `if use_naflex:` by `_USE_NAFLEX_DEFAULT = os.environ.get('TIMM_USE_NAFLEXVIT', 'false').lower() == 'true'`;
undecided, its other branch rebinding the keyword arguments left every ViT factory of the file unread (`--class
vit_base_patch16_384` was refused). An environment read counts as its default."""

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from porter.frontend.model_entry import model_entry
from porter.frontend.module_constants import module_constants
from porter.frontend.source import parse_source
from tests.corpus.torchvision_support import import_torchvision


def test_constants_and_environment_defaults():
    module = cst.parse_module(textwrap.dedent('''
        import os
        USE_FLEX = os.environ.get("USE_FLEX", "false").lower() == "true"
        DEPTHS = (2, 2, 6, 2)
        FROM_ENV = os.getenv("WIDTH")
        TWICE = 1
        TWICE = 2
        COMPUTED = len(DEPTHS)
    '''))
    assert module_constants(module) == {"USE_FLEX": False, "DEPTHS": (2, 2, 6, 2), "FROM_ENV": None}


def test_a_condition_on_a_module_flag_is_decided(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent('''
        import os
        import torch.nn as nn

        _FLEX = os.environ.get("NET_FLEX", "0") == "1"


        class Net(nn.Module):
            def __init__(self, width=8, num_classes=10):
                super().__init__()
                self.fc = nn.Linear(width, num_classes)

            def forward(self, x):
                return self.fc(x)


        def _create(use_flex=None, **kwargs):
            if use_flex is None:
                use_flex = _FLEX
            if use_flex:
                kwargs = {"width": 4, **kwargs}
            return Net(**kwargs)


        def net_small(**kwargs):
            return _create(**dict(dict(width=16), **kwargs))
    '''))
    entry = model_entry(parse_source(path, factories=True), "net_small")
    assert entry is not None and entry.class_name == "Net" and entry.defaults == ('"width": 16',)


def test_timm_vision_transformer_factories_are_followed():
    import_torchvision()
    timm = pytest.importorskip("timm", reason="timm is not installed")
    source = parse_source(Path(timm.__file__).parent / "models" / "vision_transformer.py", factories=True)
    entry = model_entry(source, "vit_base_patch16_384")
    assert entry is not None and entry.class_name == "VisionTransformer"
    assert '"img_size": (384, 384)' in entry.defaults and '"embed_dim": 768' in entry.defaults  # (builder default)


def test_tables_of_configurations_are_their_keys():
    module = cst.parse_module(textwrap.dedent('''
        CFGS = dict(small=Cfg(depth=2), large=Cfg(depth=4))
        NAMED = {"a": Cfg(), "b": Cfg()}
        LITERAL = {"a": 1}
        FILLED = dict(x=Cfg())
        FILLED["y"] = Cfg()
        UPDATED = dict(x=Cfg())
        UPDATED.update(z=Cfg())
        SPREAD = dict(x=Cfg(), **OTHER)
    '''))
    found = module_constants(module)
    assert found["CFGS"] == {"small", "large"} and "small" in found["CFGS"].keys()
    assert found["NAMED"] == {"a", "b"} and found["LITERAL"] == {"a": 1}
    assert not {"FILLED", "UPDATED", "SPREAD"} & set(found)


def test_a_factory_choosing_its_config_by_table_membership_is_followed(tmp_path):
    """timm's maxxvit.py: `cfg_variant = variant if variant in model_cfgs else '_'.join(variant.split('_')[:-1])`,
    then `model_cfgs[cfg_variant]` handed on (as the class's `cfg`)."""
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent('''
        import torch.nn as nn


        class Cfg:
            def __init__(self, width=8):
                self.width = width


        class Net(nn.Module):
            def __init__(self, cfg, num_classes=10):
                super().__init__()
                self.fc = nn.Linear(cfg.width, num_classes)

            def forward(self, x):
                return self.fc(x)


        model_cfgs = dict(net_small=Cfg(width=4), net_large=Cfg(width=16))


        def _create(variant, cfg_variant=None, **kwargs):
            if cfg_variant is None:
                if variant in model_cfgs:
                    cfg_variant = variant
                else:
                    cfg_variant = "_".join(variant.split("_")[:-1])
            return Net(model_cfgs[cfg_variant], **kwargs)


        def net_small_224(**kwargs):
            return _create("net_small_224", **kwargs)
    '''))
    entry = model_entry(parse_source(path, factories=True), "net_small_224")
    assert entry is not None and entry.class_name == "Net"
    (argument,) = entry.arguments
    assert eval(argument, {"model_cfgs": {"net_small": "the small config"}}) == "the small config"
