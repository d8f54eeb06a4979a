"""Tests of the factory that builds the main class (porter/frontend/model_entry.py): the construction a factory
makes, read through helpers, weights switches, `*args`, tuple unpackings and `kwargs.pop`, and the factories it
refuses to guess about."""

import textwrap

import pytest

from porter.frontend.model_entry import classmethod_entry, default_entry, model_entry, required_parameters
from porter.frontend.source import parse_source

HEADER = '''
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class Net(nn.Module):
    def __init__(self, block, layers, num_classes=10, width=4):
        super().__init__()
        self.blocks = nn.Sequential(*[block(width) for _ in range(sum(layers))])
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.blocks(x).mean((2, 3)))
'''


def parsed(tmp_path, code):
    path = tmp_path / "model.py"
    path.write_text(HEADER + textwrap.dedent(code))
    return parse_source(path, "model.py")


def test_torchvision_factories_are_followed_through_their_helper_with_the_weights_left_out(tmp_path):
    source = parsed(tmp_path, '''
        def _net(block, layers, weights, progress, **kwargs):
            if weights is not None:
                _overwrite(kwargs, "num_classes", len(weights.meta["categories"]))
            model = Net(block, layers, **kwargs)
            if weights is not None:
                model.load_state_dict(weights.get_state_dict(progress=progress))
            return model


        def net18(*, weights=None, progress=True, **kwargs):
            """A docstring."""
            weights = Net18_Weights.verify(weights)
            return _net(Block, [2, 2], weights, progress, **kwargs)


        def net34(*, weights=None, progress=True, **kwargs):
            weights = Net34_Weights.verify(weights)
            return _net(Block, [3, 4], weights, progress, **kwargs)
    ''')
    assert required_parameters(source, "Net") == {"block", "layers"}
    entry = default_entry(source, "Net", {})
    assert (entry.function, entry.class_name, entry.arguments, entry.takes_kwargs) == (
        "net18", "Net", ("Block", "[2, 2]"), True)
    assert not entry.as_written
    code = entry.code("model.py")
    assert code.startswith("def net18(**kwargs):\n") and code.endswith("    return Net(Block, [2, 2], **kwargs)\n")
    compile(code, "entry", "exec")
    assert model_entry(source, "net34").arguments == ("Block", "[3, 4]")
    # the class's own arguments complete: no factory is needed
    assert default_entry(source, "Net", {"block": "Block", "layers": [1]}) is None


def test_a_factory_the_port_carries_is_used_as_written(tmp_path):
    source = parsed(tmp_path, '''
        def net_tiny(**kwargs):
            return Net(Block, [1, 1], **kwargs)
    ''')
    entry = default_entry(source, "Net", {})
    assert entry.function == "net_tiny" and entry.as_written and entry.code("model.py") is None


def test_star_args_tuple_unpackings_and_popped_arguments(tmp_path):
    source = parsed(tmp_path, '''
        CONFIGS = {"a": [1, 2]}


        def _conf(name, width_mult=1.0, **kwargs):
            return CONFIGS[name], int(4 * width_mult)


        def _build(weights, progress, *args, **kwargs):
            model = Net(*args, **kwargs)
            return model


        def net_a(*, weights=None, progress=True, **kwargs):
            layers, width = _conf("a", width_mult=2.0)
            return _build(weights, progress, Block, layers, width=width, num_classes=kwargs.pop("classes", 5), **kwargs)
    ''')
    entry = model_entry(source, "net_a")
    assert entry.statements == ('layers, width = _conf("a", width_mult=2.0)',)
    assert entry.arguments == ("Block", "layers", "width=width", 'num_classes=kwargs.pop("classes", 5)')
    assert entry.names == {"Block", "_conf"}
    namespace = {}  # the generated factory run against stand-ins that return what they were handed
    stand_ins = ("CONFIGS = {'a': [1, 2]}\ndef _conf(name, width_mult=1.0, **kwargs):\n    return CONFIGS[name], "
                 "int(4 * width_mult)\nBlock = object\ndef Net(*args, **kwargs):\n    return args, kwargs\n")
    exec(stand_ins + entry.code("model.py"), namespace)  # noqa: S102
    assert namespace["net_a"](classes=3) == ((object, [1, 2]), {"width": 8, "num_classes": 3})


@pytest.mark.parametrize("body", [
    # the model changed after its construction
    "model = Net(Block, [1])\n    model.num_classes = 5\n    return model",
    # the keyword arguments changed by a statement of their own
    'kwargs.pop("aux", None)\n    return Net(Block, [1], **kwargs)',
    # a condition porter cannot decide that touches what is built
    'if torch_version > 2:\n        kwargs["width"] = 8\n    return Net(Block, [1], **kwargs)',
    # a name the factory never binds
    "weights = None\n    return Net(Block, layers_from_somewhere_else(), **kwargs)",
])
def test_factories_that_do_more_than_construct_are_not_guessed(tmp_path, body):
    source = parsed(tmp_path, f"\ndef net(**kwargs):\n    {body}\n")
    assert model_entry(source, "net") is None
    assert default_entry(source, "Net", {}) is None


def test_a_factory_with_a_required_parameter_is_not_a_default(tmp_path):
    source = parsed(tmp_path, '''
        def get_net(depth, **kwargs):
            return Net(Block, [depth], **kwargs)
    ''')
    assert default_entry(source, "Net", {}) is None
    # named with --class (and --init-args '{"depth": 2}'): the port carries it as written
    assert model_entry(source, "get_net").as_written


def test_a_pretrained_switch_left_at_its_default_decides_its_branch(tmp_path):
    source = parsed(tmp_path, '''
        def net(pretrained=False, **kwargs):
            if pretrained:
                kwargs["num_classes"] = 1000
                model = Net(Block, [9], **kwargs)
            else:
                model = Net(Block, [1], **kwargs)
            return model
    ''')
    assert model_entry(source, "net").arguments == ("Block", "[1]")


def test_torch_names_in_the_arguments_are_ones_the_port_can_name(tmp_path):
    """torchvision's RegNet factories hand `partial(nn.BatchNorm2d, eps=1e-05)` on: the port names the runtime's
    BatchNorm2d there (codegen's runtime renamer); a torch name no rule ports leaves the factory unread."""
    source = parsed(tmp_path, '''
        from functools import partial


        def net_bn(**kwargs):
            weights = None
            return Net(Block, [1], norm=kwargs.pop("norm", partial(nn.BatchNorm2d, eps=1e-05)), **kwargs)


        def net_odd(**kwargs):
            weights = None
            return Net(Block, [1], norm=nn.NoSuchNorm, **kwargs)
    ''')
    assert model_entry(source, "net_bn").names == {"Block"}  # imports: kept by the emitter as the code reads them
    assert model_entry(source, "net_odd") is None


PYTORCHCV_STYLE = '''
def get_net(blocks, width_scale=1.0, pretrained=False, **kwargs):
    if blocks == 10:
        layers = [1, 1]
    elif blocks == 18:
        layers = [2, 2]
    else:
        raise ValueError("Unsupported")
    channels = [[ci] * li for (ci, li) in zip([64, 128], layers)]
    if width_scale != 1.0:
        channels = [[int(c * width_scale) for c in ci] for ci in channels]
    net = Net(Block, channels, width=sum(layers) >= 4, **kwargs)
    AFTER
    if pretrained:
        load(net)
    return net


def net18(**kwargs):
    return get_net(blocks=18, **kwargs)


def get_huge(**kwargs):
    weights = None
    return Net(Block, [0] * 10**12, **kwargs)
'''


def test_pytorchcv_style_factories_decide_their_branches_and_fold_what_they_compute(tmp_path):
    """pytorchcv's `get_resnet(blocks=18)` picks its layers by an if-chain on `blocks` and computes its channel
    lists with comprehensions: the port's factory holds the lists computed; a huge product is never run."""
    source = parsed(tmp_path, PYTORCHCV_STYLE.replace("AFTER", "pass"))
    assert model_entry(source, "net18").arguments == ("Block", "[[64, 64], [128, 128]]", "width=True")
    assert model_entry(source, "get_huge").arguments == ("Block", "[0] * 10**12")
    # the model changed after its construction: not guessed
    assert model_entry(parsed(tmp_path, PYTORCHCV_STYLE.replace("AFTER", "net.channels = channels")), "net18") is None


def test_timm_factories_build_through_build_model_with_cfg(tmp_path):
    """timm's `resnet50()` merges its model arguments into `**kwargs` and hands the class to
    `build_model_with_cfg`, which builds `ResNet(**kwargs)` (`cfg=model_cfg` where one is given) after taking its
    own arguments (`feature_cfg`, the pretrained config)."""
    source = parsed(tmp_path, '''
        from timm.models._builder import build_model_with_cfg

        CFGS = {"a": [1, 2]}


        def _create(variant, pretrained=False, **kwargs):
            return build_model_with_cfg(Net, variant, pretrained, feature_cfg=dict(flatten_sequential=True),
                                        **kwargs)


        def net50(pretrained=False, **kwargs):
            model_args = dict(block=Block, layers=(3, 4))
            return _create("net50", pretrained, **dict(model_args, **kwargs))


        def net_cfg(pretrained=False, **kwargs):
            return build_model_with_cfg(Net, "net_cfg", pretrained, model_cfg=CFGS["a"], **kwargs)
    ''')
    entry = model_entry(source, "net50")  # (the user's keyword arguments win over model_args, as in timm)
    assert (entry.arguments, entry.defaults, entry.takes_kwargs) == ((), ('"block": Block', '"layers": (3, 4)'), True)
    assert 'return Net(**{"block": Block, "layers": (3, 4), **kwargs})' in entry.code("model.py")
    assert model_entry(source, "net_cfg").arguments == ('cfg=CFGS["a"]',)


def test_the_class_handed_to_the_builder_may_be_chosen_by_a_decided_condition(tmp_path):
    """timm's deit.py: `model_cls = VisionTransformerDistilled if distilled else VisionTransformer`, then
    `build_model_with_cfg(model_cls, ...)` (`--class deit_tiny_distilled_patch16_224` was refused)."""
    source = parsed(tmp_path, '''
        from timm.models._builder import build_model_with_cfg


        class Distilled(Net):
            pass


        def _create(variant, pretrained=False, distilled=False, **kwargs):
            model_cls = Distilled if distilled else Net
            return build_model_with_cfg(model_cls, variant, pretrained, **kwargs)


        def net_distilled(pretrained=False, **kwargs):
            return _create("net_distilled", pretrained, distilled=True, **dict(dict(block=Block), **kwargs))


        def net_plain(pretrained=False, **kwargs):
            return _create("net_plain", pretrained, **dict(dict(block=Block), **kwargs))
    ''')
    assert model_entry(source, "net_distilled").class_name == "Distilled"
    assert model_entry(source, "net_plain").class_name == "Net"


def test_a_classmethod_building_the_class_is_an_entry(tmp_path):
    source = parsed(tmp_path, '''
        class Built(nn.Module):
            def __init__(self, config=None):
                super().__init__()

            @classmethod
            def from_name(cls, name):
                return cls(name)

            def helper(self, name):
                return name
    ''')
    entry = classmethod_entry(source, "Built.from_name")
    assert (entry.class_name, entry.as_written) == ("Built", True)
    assert classmethod_entry(source, "Built.helper") is None and classmethod_entry(source, "Nope.from_name") is None


def test_factories_reading_pretrained_weights_or_names_the_port_lacks_are_not_followed(tmp_path):
    """torchvision's detection factories hand a backbone built with `weights_backbone=ResNet50_Weights...` (a real
    default, not None) through a sibling's helper: the port's factory would name both, which it does not define."""
    source = parsed(tmp_path, '''
        from .backbone_utils import _fpn_extractor


        def net_backbone(*, weights_backbone=Backbone_Weights.DEFAULT, **kwargs):
            weights_backbone = Backbone_Weights.verify(weights_backbone)
            return Net(Block, [1], width=fold(weights_backbone), **kwargs)


        def net_sibling(**kwargs):
            weights = None
            return Net(_fpn_extractor(Block), [1], **kwargs)
    ''')
    assert model_entry(source, "net_backbone") is None
    assert model_entry(source, "net_sibling") is None


def test_an_import_inside_the_factory_comes_with_it(tmp_path):
    """pytorchcv's densenet computes its channels with `reduce`, imported inside the factory."""
    source = parsed(tmp_path, '''
        def get_net(**kwargs):
            from functools import reduce
            from somewhere import helper
            layers = reduce(lambda xs, x: xs + [x], [1, 2], [])
            return Net(Block, layers, **kwargs)


        def get_other(**kwargs):
            from somewhere import helper
            return Net(Block, helper(), **kwargs)
    ''')
    entry = model_entry(source, "get_net")
    assert entry.statements == ("from functools import reduce",) and entry.arguments[1].startswith("reduce(")
    assert model_entry(source, "get_other") is None


def test_a_default_set_on_the_keyword_arguments_comes_with_the_factory(tmp_path):
    """timm's byoanet.py: `kwargs.setdefault('img_size', 256)` before the builder, and a config chosen by a
    condition of the bound names (`CFGS[variant] if not cfg_variant else CFGS[cfg_variant]`): the port's factory
    sets the same default and reads the config the condition takes. A default set on a dict the factory built
    (`options = dict(width=4, **kwargs)`, then `options.setdefault(...)`) is one the user's keywords override."""
    source = parsed(tmp_path, '''
        CFGS = {"a": [1, 2], "b": [2, 2]}


        def _create(variant, cfg_variant=None, **kwargs):
            return Net(Block, CFGS[variant] if not cfg_variant else CFGS[cfg_variant], **kwargs)


        def net_a(**kwargs):
            kwargs.setdefault("width", 8)
            return _create("a", "b", **kwargs)


        def net_built(**kwargs):
            options = dict(width=4, **kwargs)
            options.setdefault("num_classes", 3)
            return Net(Block, [1], **options)
    ''')
    entry = model_entry(source, "net_a")
    assert entry.statements == ('kwargs.setdefault("width", 8)',)
    assert (entry.arguments, entry.takes_kwargs) == (("Block", 'CFGS["b"]'), True)
    namespace = {}
    exec(entry.code("model.py"), {"Net": lambda *a, **k: (a, k), "Block": "Block", "CFGS": {"b": [2, 2]}}, namespace)
    assert namespace["net_a"]() == (("Block", [2, 2]), {"width": 8})
    assert namespace["net_a"](width=5) == (("Block", [2, 2]), {"width": 5})
    built = model_entry(source, "net_built")  # (a `dict(...)` the factory builds is followed as a display)
    assert set(built.defaults) == {'"num_classes": 3', '"width": 4'}
    namespace = {}
    exec(built.code("model.py"), {"Net": lambda *a, **k: (a, k), "Block": "Block"}, namespace)
    assert namespace["net_built"]() == (("Block", [1]), {"num_classes": 3, "width": 4})
    assert namespace["net_built"](num_classes=7, width=2) == (("Block", [1]), {"num_classes": 7, "width": 2})


def test_modules_built_into_locals_are_statements_of_the_factory(tmp_path):
    """A model composed of modules the factory builds first (torchvision's segmentation helpers, users'
    `build_model()`): each read local is built once, in the source's order; a module changed after it was built, or
    one read and then returned, is not guessed about."""
    source = parsed(tmp_path, '''
        def _stem(width):
            first = Block(width)
            return Block(first.conv.out_channels)


        def composed(width=4, **kwargs):
            stem = _stem(width)
            body = Block(width * 2)
            return Net(stem, [body, stem, body], **kwargs)


        def changed(width=4):
            stem = Block(width)
            stem.conv = None
            return Net(stem, [1])


        def read_then_returned(width=4):
            stem = Block(width)
            size = stem.conv.out_channels
            return stem
    ''')
    entry = model_entry(source, "composed")
    assert entry.statements == ("first = Block(width)", "stem = Block(first.conv.out_channels)",
                                "body = Block(width * 2)")
    assert entry.parameters == (("width", "4"),)
    assert (entry.arguments, entry.takes_kwargs) == (("stem", "[body, stem, body]"), True)
    assert model_entry(source, "changed") is None
    assert model_entry(source, "read_then_returned") is None


def test_parameters_the_construction_reads_are_the_port_factorys_own(tmp_path):
    """`build(num_classes=10, width=4)` keeps its parameters (a TPU script calls `build(num_classes=100)` as it
    called the source's); one a condition decides (`depth`, pytorchcv's if-chains) is bound to its default, a
    pretrained-weights switch and a parameter the construction never reads (`progress`) are left out. They stay
    positional while they lead the source's, keyword-only after one left out."""
    source = parsed(tmp_path, '''
        def build(num_classes=10, width=4, depth=2, progress=True, **kwargs):
            if depth == 2:
                layers = [1, 1]
            else:
                layers = [2, 2, 2]
            return Net(Block, layers, num_classes=num_classes, width=width, **kwargs)


        def pretrained_first(pretrained=False, width=6):
            layers = [1]
            return Net(Block, layers, width=width)
    ''')
    entry = model_entry(source, "build")
    assert entry.parameters == (("num_classes", "10"), ("width", "4")) and entry.positional == 2
    assert entry.arguments == ("Block", "[1, 1]", "num_classes=num_classes", "width=width")
    assert entry.code("model.py").startswith("def build(num_classes=10, width=4, **kwargs):")
    entry = model_entry(source, "pretrained_first")
    assert entry.code("model.py").startswith("def pretrained_first(*, width=6):")


def test_a_value_changed_in_place_under_a_condition_the_reader_cannot_decide_is_unknown(tmp_path):
    """torchvision's `_fcn_resnet`: `return_layers = {"layer4": "out"}; if aux: return_layers["layer3"] = "aux"`.
    With `aux` a parameter the port's factory keeps, the condition is undecided: the dict changed in place there
    was read as it was before (a silent wrong port for aux=True). What an unfollowed statement changes in place is
    unknown after it (so `aux` is bound to its default, which decides the condition); a list grown in a loop too."""
    source = parsed(tmp_path, '''
        def _net(layers, aux):
            widths = {"a": 4}
            if aux:
                widths["b"] = 8
            return Net(Block, [layers], width=len(widths))


        def net(aux=False, layers=2):
            return _net(layers, aux)


        def grown(layers=2):
            extra = []
            for i in range(layers):
                extra.append(i)
            return Net(Block, extra)
    ''')
    entry = model_entry(source, "net")
    assert entry.parameters == (("layers", "2"),) and entry.arguments == ("Block", "[layers]", "width=1")
    assert model_entry(source, "grown") is None


def test_timm_generators_popping_the_users_keyword_arguments_are_followed(tmp_path):
    """timm's efficientnet.py / mobilenetv3.py: `_gen_mobilenet_v3(variant, ...)` decides its architecture by the
    variant's name, hands the user's keyword arguments to helpers that pop from them (`resolve_act_layer(kwargs,
    "relu")`, `kwargs.pop("norm_layer", None) or partial(...)`), and `_create_mnv3` tests `kwargs.pop("features_only",
    False)` over them before `build_model_with_cfg`. The port's factory runs those helpers once where the source
    does, follows the default of a popped switch and refuses a value that would take the other branch."""
    source = parsed(tmp_path, '''
        from functools import partial

        from timm.models._builder import build_model_with_cfg


        class Gen(nn.Module):
            def __init__(self, layers, width=4, act="relu", norm=None, num_classes=10):
                super().__init__()
                self.head = nn.Linear(width, num_classes)

            def forward(self, x):
                return self.head(x)


        def resolve_act(kwargs, default="relu"):
            return kwargs.pop("act", default)


        def resolve_norm_args(kwargs):
            return {"eps": kwargs.pop("eps")} if "eps" in kwargs else {}


        def decode(arch):
            return [int(block[1:]) for block in arch]


        def _create(variant, pretrained=False, **kwargs):
            model_cls = Gen
            kwargs_filter = None
            if kwargs.pop("features_only", False):
                kwargs_filter = ("num_classes",)
            strict = kwargs.pop("pretrained_strict", True)
            return build_model_with_cfg(model_cls, variant, pretrained, features_only=False, pretrained_strict=strict,
                                        kwargs_filter=kwargs_filter, **kwargs)


        def _gen(variant, width=1.0, pretrained=False, **kwargs):
            if "small" in variant:
                act = resolve_act(kwargs, "relu")
            else:
                act = resolve_act(kwargs, "gelu")
            model_kwargs = dict(layers=decode(["b1", "b2"]), width=int(4 * width), act=act,
                                norm=kwargs.pop("norm", None) or partial(nn.BatchNorm2d, **resolve_norm_args(kwargs)),
                                **kwargs)
            model = _create(variant, pretrained, **model_kwargs)
            return model


        def gen_small(pretrained=False, **kwargs):
            model = _gen("gen_small", pretrained=pretrained, **kwargs)
            return model
    ''')
    entry = model_entry(source, "gen_small")
    assert entry.class_name == "Gen" and entry.takes_kwargs
    assert entry.statements[0] == 'act = resolve_act(kwargs, "relu")'
    assert entry.statements[2] == 'strict = kwargs.pop("pretrained_strict", True)'
    namespace = {}
    stand_ins = ("import functools\npartial = functools.partial\nclass nn:\n    BatchNorm2d = print\n"
                 "def Gen(**kwargs):\n    return kwargs\n")
    code = "\n\n".join(textwrap.dedent(source.text[source.text.index(f"def {name}("):]).split("\n\n\n")[0]
                       for name in ("resolve_act", "resolve_norm_args", "decode"))
    exec(stand_ins + code + "\n\n" + entry.code("model.py"), namespace)  # noqa: S102
    built = namespace["gen_small"]()
    assert (built["layers"], built["width"], built["act"], built["norm"].func) == ([1, 2], 4, "relu", print)
    built = namespace["gen_small"](act="silu", eps=0.1, num_classes=3, pretrained_strict=False)
    assert (built["act"], built["norm"].keywords, built["num_classes"]) == ("silu", {"eps": 0.1}, 3)
    assert "pretrained_strict" not in built  # popped by the port's factory as by the source's
    with pytest.raises(TypeError, match="features_only"):
        namespace["gen_small"](features_only=True)


def test_a_timm_builder_asked_for_features_is_not_followed(tmp_path):
    source = parsed(tmp_path, '''
        from timm.models._builder import build_model_with_cfg


        def net(pretrained=False, **kwargs):
            return build_model_with_cfg(Net, "net", pretrained, features_only=True, block=Block, layers=[1], **kwargs)
    ''')
    assert model_entry(source, "net") is None


def test_configs_filled_in_by_statements_are_followed(tmp_path):
    """timm's selecsls.py fills `cfg = {}` item by item (`cfg["block"] = ...`, `feature_info.extend([...])`) under
    conditions on the variant; vitamin.py sets a default and a built module on `dict(model_args, **kwargs)` and
    reads `kwargs.get("in_chans", 3)`; nextvit.py computes a value only the builder's feature config reads and pops
    `out_indices` with it as default. The port's factory builds what the source's does, the user's keyword
    arguments still winning where they win in the source."""
    source = parsed(tmp_path, '''
        from timm.models._builder import build_model_with_cfg


        class Cfg(nn.Module):
            def __init__(self, cfg, in_chans, num_classes=10, stem=None, patch_size=4):
                super().__init__()
                self.head = nn.Linear(in_chans, num_classes)

            def forward(self, x):
                return self.head(x)


        def _create(variant, pretrained=False, **kwargs):
            cfg = {}
            info = [dict(num_chs=4)]
            if variant.startswith("net_a"):
                cfg["block"] = Block
                cfg["features"] = [(4, 8)]
                info.extend([dict(num_chs=8)])
                if variant == "net_a2":
                    cfg["features"] = [(4, 16)]
            cfg["feature_info"] = info
            indices = tuple(i for i, _ in enumerate(kwargs.get("depths", (1, 1))))
            out_indices = kwargs.pop("out_indices", indices)
            stem = Block(kwargs.get("width", 4))
            kwargs["stem"] = stem
            kwargs.setdefault("patch_size", 2)
            return build_model_with_cfg(Cfg, variant, pretrained, model_cfg=cfg,
                                        feature_cfg=dict(out_indices=out_indices), **kwargs)


        def net_a2(pretrained=False, **kwargs):
            model_args = dict(num_classes=5)
            return _create("net_a2", pretrained, **dict(model_args, **kwargs))
    ''')
    entry = model_entry(source, "net_a2")
    assert entry.class_name == "Cfg"
    namespace = {}
    exec("class Block:\n    def __init__(self, width=4):\n        self.width = width\n"  # noqa: S102
         "def Cfg(**kwargs):\n    return kwargs\n" + entry.code("model.py"), namespace)
    built = namespace["net_a2"]()
    assert built["cfg"] == {"block": namespace["Block"], "features": [(4, 16)],
                            "feature_info": [{"num_chs": 4}, {"num_chs": 8}]}
    assert (built["in_chans"], built["num_classes"], built["patch_size"], built["stem"].width) == (3, 5, 2, 4)
    built = namespace["net_a2"](patch_size=8, width=6, num_classes=7, out_indices=(1,), in_chans=1)
    assert (built["in_chans"], built["num_classes"], built["patch_size"], built["stem"].width) == (1, 7, 8, 6)
    assert "out_indices" not in built and "width" in built  # popped as the source pops it; read, not popped


def test_keyword_arguments_timms_builder_filters_out_are_popped(tmp_path):
    """timm's mobilenetv5.py builds its encoder with `kwargs_filter=("num_classes", ...)`: the builder pops those
    from the keyword arguments, so the port's factory does too."""
    source = parsed(tmp_path, '''
        from timm.models._builder import build_model_with_cfg


        def _create(variant, pretrained=False, **kwargs):
            return build_model_with_cfg(Net, variant, pretrained, kwargs_filter=("num_classes", "head"), **kwargs)


        def net_enc(pretrained=False, **kwargs):
            return _create("net_enc", pretrained, **dict(block=Block, layers=[1], num_classes=3, **kwargs))
    ''')
    namespace = {}
    exec("Block = 'Block'\ndef Net(**kwargs):\n    return kwargs\n" + model_entry(source, "net_enc").code("m.py"),  # noqa: S102
         namespace)
    assert namespace["net_enc"](head=1, width=2) == {"block": "Block", "layers": [1], "width": 2}


def test_the_first_factory_building_any_class_is_found_where_none_is_asked_for(tmp_path):
    """timm's vitamin.py: its factories hand `VisionTransformer` to timm's builder while its own classes are parts;
    `default_entry(source, None, ...)` is the first public factory building some module class."""
    source = parsed(tmp_path, '''
        def _helper(**kwargs):
            return Net(Block, [1], **kwargs)


        def needs_depth(depth):
            return Net(Block, [depth])


        def net_small(**kwargs):
            return _helper(width=2, **kwargs)
    ''')
    entry = default_entry(source, None, {})
    assert (entry.function, entry.class_name) == ("net_small", "Net")
