"""passes/function_attributes.py: which functions a class's constructions hand it is read from one walk of the file,
whatever the number of classes asked about (it was a walk of the whole file per class: timm's resnet.py, whose linked
helpers hold ~50 classes keeping a constructor argument on `self`, spent half its conversion there)."""

from porter.convert import ConvertOptions, convert
from porter.passes import function_attributes

BLOCK = '''
class Block{i}(nn.Module):
    def __init__(self, channels, scheme=(lambda module, x: module(x) + x)):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.scheme = scheme

    def forward(self, x):
        return self.scheme(self.conv, x)
'''

MAIN = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential({blocks})

    def forward(self, x):
        return self.blocks(x)
'''


def _source(count):
    classes = "".join(BLOCK.format(i=i) for i in range(count))
    blocks = ", ".join(f"Block{i}(4, scheme=lambda module, x: module(x))" if i % 2 else f"Block{i}(4)"
                       for i in range(count))
    return "import torch\nfrom torch import nn\n" + classes + MAIN.format(blocks=blocks)


def test_constructions_are_read_from_one_walk_of_the_file_for_every_class(tmp_path, monkeypatch):
    walks = []
    walk = function_attributes.descendants
    monkeypatch.setattr(function_attributes, "descendants", lambda node: walks.append(node) or walk(node))
    for count in (2, 12):
        path = tmp_path / f"net{count}.py"
        path.write_text(_source(count))
        walks.clear()
        conversion = convert(ConvertOptions(path, tmp_path / f"out{count}", input_specs=["4,8,8"]))
        assert conversion.exit_code == 0
        assert len(walks) == 1, count  # not one per class


def test_each_class_gets_the_lambdas_its_own_constructions_hand_it(tmp_path):
    from porter.frontend.source import parse_source

    path = tmp_path / "net.py"
    path.write_text(_source(3))
    source = parse_source(path)
    found = {name: function_attributes.constructed_lambdas(source, source.classes[name], {"scheme": "scheme"})
             for name in ("Block0", "Block1", "Block2")}
    codes = {name: [source.module.code_for_node(f) for f in found[name]["scheme"]] for name in found}
    assert codes == {"Block0": ["(lambda module, x: module(x) + x)"], "Block1": ["lambda module, x: module(x)"],
                     "Block2": ["(lambda module, x: module(x) + x)"]}
