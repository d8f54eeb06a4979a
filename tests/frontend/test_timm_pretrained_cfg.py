"""timm's builder sets `num_classes`, `global_pool`, `in_chans` and (for a fixed input size) `img_size` from the
variant's pretrained config where the factory gave none (vitamin_small_224: a 768-class head; vit_base_patch16_384:
a ViT for 384 pixels). porter reads those configs statically (frontend/timm_pretrained_cfg.py): checked here against
timm's own resolved config for every variant of several real model files, and on a file of its own."""

import textwrap
from pathlib import Path
from types import SimpleNamespace

import libcst as cst
import pytest

from porter.frontend.source import parse_source
from porter.frontend.timm_pretrained_cfg import builder_defaults
from tests.corpus.torchvision_support import import_torchvision

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
timm = pytest.importorskip("timm", reason="timm is not installed (scripts/setup.sh installs timm==1.0.31 with "
                                          "--no-deps)")

FILES = ("vitamin", "vision_transformer", "deit", "swin_transformer", "resnet", "efficientnet", "convnext", "beit",
         "eva", "maxxvit", "regnet", "mobilenetv3", "levit", "cait", "volo", "xcit", "hiera", "fastvit")


def read(path):
    """What builder_defaults reads of a parsed file: its module and its top-level functions (porter's full
    `parse_source` indexes every node too: seconds a file here)."""
    module = cst.parse_module(Path(path).read_text())
    return SimpleNamespace(module=module, functions={s.name.value: s for s in module.body
                                                     if isinstance(s, cst.FunctionDef)})


def timm_defaults(variant):
    """What timm's `_update_default_model_kwargs` sets for `variant` with no keyword arguments given."""
    cfg = timm.models.get_pretrained_cfg(variant).to_dict()
    found = {}
    if cfg.get("num_classes") is not None and cfg["num_classes"] >= 0:
        found["num_classes"] = cfg["num_classes"]
    if cfg.get("global_pool") is not None:
        found["global_pool"] = cfg["global_pool"]
    if cfg.get("input_size") is not None:
        found["in_chans"] = cfg["input_size"][0]
        if cfg.get("fixed_input_size"):
            found["img_size"] = tuple(cfg["input_size"][-2:])
    return found


@pytest.mark.parametrize("stem", FILES)
def test_every_variant_of_a_file_gets_the_defaults_timm_sets(stem):
    path = Path(timm.__file__).parent / "models" / f"{stem}.py"
    source = read(path)
    module = getattr(timm.models, stem)
    variants = sorted({key.split(".", 1)[0] for key in module.default_cfgs} & set(timm.list_models()))
    assert variants
    complete = 0
    for variant in variants:
        found = builder_defaults(source, variant)
        expected = timm_defaults(variant)
        assert {k: v for k, v in expected.items() if k in found} == found, variant
        complete += found == expected
    assert complete >= 0.9 * len(variants)  # (a config porter cannot read literally leaves entries out)


def test_a_config_function_and_its_keyword_arguments(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent('''
        def _cfg(url="", **kwargs):
            return {"url": url, "num_classes": 1000, "input_size": (3, 224, 224), **kwargs}

        default_cfgs = generate_default_cfgs({
            "net_small.first_tag": _cfg(num_classes=768, input_size=(3, 256, 256), fixed_input_size=True),
            "net_small.second_tag": _cfg(num_classes=10),
            "net_tiny": _cfg(global_pool="avg"),
        })
    '''))
    source = parse_source(path)
    assert builder_defaults(source, "net_small") == {"num_classes": 768, "in_chans": 3, "img_size": (256, 256)}
    assert builder_defaults(source, "net_tiny") == {"num_classes": 1000, "global_pool": "avg", "in_chans": 3}
    assert builder_defaults(source, "net_large") == {}
