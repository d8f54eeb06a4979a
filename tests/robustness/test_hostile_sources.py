"""Hostile and odd (but syntactically valid) model sources: porter never answers with a traceback.

Each source either converts (exit 0 or 1, every emitted Python file compiles) or gets one clean
`porter: error:` line with exit 2 and nothing written. Sources that currently crash the translator are
marked with the crash (reported to the lead); the marks are strict so that a fix shows up.
"""

import textwrap

import pytest

from tests.robustness.test_mutation_fuzz import check_mutant

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def model(init="self.fc = nn.Linear(4, 4)", forward="return self.fc(x)", extra=""):
    return (HEADER + extra + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            + "".join(f"        {line}\n" for line in init.split("\n"))
            + "\n    def forward(self, x):\n" + "".join(f"        {line}\n" for line in forward.split("\n")))


def file(text):
    return HEADER + textwrap.dedent(text).lstrip("\n")


SOURCES = {
    "nested_calls_150": model(forward="return " + "torch.relu(" * 150 + "x" + ")" * 150),
    "unary_chain_900": model(forward="return " + "-" * 900 + "x"),
    "sum_of_3000_terms": model(forward="return " + " + ".join(["x"] * 3000)),
    "nested_calls_90": model(forward="return " + "torch.relu(" * 90 + "x" + ")" * 90),
    "circular_bases": file("""
        class A(nn.Module):
            def forward(self, x):
                return x


        class B(A):
            pass


        class A(B):
            def forward(self, x):
                return super().forward(x)
        """),
    "self_instantiation": model(init="self.fc = nn.Linear(4, 4)\nself.child = Net()"),
    "recursive_forward": file("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, n=3):
                return x if n == 0 else self.forward(self.fc(x), n - 1)
        """),
    "mutually_recursive_helpers": model(forward="return f(self.fc(x), 4)", extra=textwrap.dedent("""
        def f(x, n):
            return g(x, n - 1) if n else x


        def g(x, n):
            return f(x, n - 1) if n else x


        """).lstrip("\n")),
    "billion_layers": model(init="self.layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(10**9)])",
                            forward="return self.layers(x)"),
    "endless_init_loop": model(init="self.layers = nn.ModuleList()\nwhile True:\n"
                                    "    self.layers.append(nn.Linear(4, 4))"),
    "astronomical_sizes": model(init="self.fc = nn.Linear(10**30, 3)\n"
                                     "self.big = nn.Parameter(torch.zeros(10**6, 10**6))"),
    "exotic_syntax": model(forward=textwrap.dedent("""
        match x.dim():
            case 2:
                y = (z := self.fc(x))
            case _:
                y = x
        try:
            y = y + 1
        except Exception:
            pass
        f = lambda t: t * 3
        first, *rest = [y, y]
        print(f'{y.shape!r:>10}')
        assert y is not None
        del rest
        return f(first)""").strip("\n")),
    "async_forward": file("""
        class Net(nn.Module):
            async def forward(self, x):
                await x
                return x
        """),
    "generator_forward": file("""
        class Net(nn.Module):
            def forward(self, x):
                yield x
                yield from [x]
        """),
    "dynamic_attributes": model(init="for n in ('a', 'b'):\n    setattr(self, n, nn.Linear(4, 4))\n"
                                     "self.__dict__['c'] = nn.Linear(4, 4)\ndel self.a",
                                forward="return getattr(self, 'b')(x)"),
    "no_forward": file("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
        """),
    "forward_assigned": file("""
        def run(self, x):
            return self.fc(x)


        class Net(nn.Module):
            forward = run

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
        """),
    "metaclass_and_nesting": file("""
        class Meta(type):
            pass


        class Net(nn.Module, metaclass=Meta):
            class Inner(nn.Module):
                def forward(self, x):
                    return x

            def __init__(self):
                super().__init__()
                self.inner = self.Inner()

            def forward(self, x):
                return self.inner(x)
        """),
    "classes_under_if": file("""
        if torch.cuda.is_available():
            class Net(nn.Module):
                def forward(self, x):
                    return x
        """),
    "duplicate_class": file("""
        class Net(nn.Module):
            def forward(self, x):
                return x


        class Net(nn.Module):
            def forward(self, x):
                return -x
        """),
    "star_imports": textwrap.dedent("""
        from torch import *
        from torch.nn import *


        class Net(Module):
            def __init__(self):
                super().__init__()
                self.fc = Linear(4, 4)

            def forward(self, x):
                return relu(self.fc(x))
        """).lstrip("\n"),
    "aliased_base": textwrap.dedent("""
        import torch.nn as N
        M = N.Module


        class Net(M):
            def forward(self, x):
                return x
        """).lstrip("\n"),
    "shadowed_torch": file("""
        class torch:
            pass


        class Net(nn.Module):
            def forward(self, x):
                return x
        """),
    "unicode_identifiers": file("""
        class Modèle(nn.Module):
            def __init__(self, largeur=4):
                super().__init__()
                self.couche_ĉ = nn.Linear(largeur, largeur)

            def forward(self, entrée):
                return self.couche_ĉ(entrée)
        """),
    "repeated_super_and_reassignment": model(init="nn.Module.__init__(self)\nself.fc = nn.Linear(4, 4)\n"
                                                  "self.fc = nn.Linear(4, 4)\nself.fc = None\nself.fc = nn.Identity()"),
    "nonsense_layer_arguments": model(init=textwrap.dedent("""
        self.a = nn.Conv2d()
        self.b = nn.Linear(4, 4, 5, 6, 7, 8)
        self.c = nn.Conv2d(3, 8, kernel_size='x', padding=object())
        self.e = nn.BatchNorm2d(num_features=-3)
        self.f = nn.Conv2d(3, 8, 3, groups=0)
        self.fc = nn.Linear(*[4, 4], **{'bias': False})""").strip("\n")),
    "nonsense_tensor_ops": model(forward=textwrap.dedent("""
        x = x.view()
        x = x.permute(0)
        x = F.softmax(x, dim='a')
        x = x.transpose(0, 1, 2)
        x = x[..., None, ::-1, 1:2:0]
        x = x.reshape(-1, -1)
        x = torch.flatten(x, 5, 1)
        x = x.mean(dim=[])
        return x.sum(dim=99)""").strip("\n")),
    "cat_without_arguments": model(forward="return torch.cat()"),
    "stack_without_arguments": model(forward="return torch.stack()"),
    "einsum_without_arguments": model(forward="return torch.einsum()"),
    "matmul_with_one_argument": model(forward="return torch.matmul(x)"),
    "masked_fill_without_value": model(forward="return x.masked_fill(x > 0)"),
    "new_zeros_without_size": model(forward="return x.new_zeros()"),
    "plain_list_of_layers": model(init="self.blocks = [nn.Linear(4, 4)]", forward="return self.blocks[0](x)"),
    "flatten_without_arguments": model(forward="return torch.flatten()"),
    "submodule_called_without_arguments": model(init="self.block = Block()", forward="return self.block()",
                                                extra="class Block(nn.Module):\n    def forward(self, x):\n"
                                                      "        return x\n\n\n"),
    "init_without_self": file("""
        class Net(nn.Module):
            def __init__():
                super().__init__()

            def forward(self, x):
                return x
        """),
    "forward_without_parameters": file("""
        class Net(nn.Module):
            def forward():
                return 1
        """),
}

KNOWN_TRANSLATOR_CRASHES = {  # reported to the lead with these sources
}


def params():
    for name in sorted(SOURCES):
        marks = [pytest.mark.xfail(reason=KNOWN_TRANSLATOR_CRASHES[name], strict=True)] \
            if name in KNOWN_TRANSLATOR_CRASHES else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", params())
def test_hostile_source_converts_or_fails_cleanly(porter_cli, tmp_path, name):
    check_mutant(porter_cli, tmp_path, SOURCES[name])


@pytest.mark.parametrize("name, expected", [("nested_calls_150", ":12: code nested"),
                                            ("unary_chain_900", ":12: code nested"),
                                            ("sum_of_3000_terms", "cannot parse the file")])
def test_absurd_nesting_is_refused_with_its_line(porter_cli, tmp_path, name, expected):
    source = tmp_path / "deep.py"
    source.write_text(SOURCES[name])
    result = porter_cli("convert", source, "-o", tmp_path / "out")
    assert result.code == 2 and expected in result.err, result.err


@pytest.mark.parametrize("file_name", ["my model-v2.py", "torch.py", "keras.py", "numpy.py", "modèle.py", "1st.py",
                                       "class.py"])
def test_awkward_file_names(porter_cli, tmp_path, file_name):
    source = tmp_path / file_name
    source.write_text(model())
    out = tmp_path / "out"
    result = porter_cli("convert", source, "-o", out, "--input-shape", "4")
    assert result.code == 0, result.err
    modules = [p for p in out.glob("*.py") if "class Net(" in p.read_text()]
    assert len(modules) == 1
    stem = modules[0].stem
    assert stem.isidentifier() and stem not in ("torch", "keras", "numpy", "tensorflow", "class")
    import keyword

    assert not keyword.iskeyword(stem)
