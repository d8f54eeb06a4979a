"""Generated code stays valid whatever the input: names that collide with keywords, builtins, Keras reserved
attributes, the generated module's imports or porter's runtime are renamed consistently; strings are emitted
as they were; every emitted Python file compiles, defines every name it uses, and the port matches torch."""

import subprocess
import sys

import pytest

from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair
from tests.robustness.conftest import write_source

pytest.importorskip("torch")
pytest.importorskip("tensorflow")

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

CASES = {
    "keras_reserved_attributes": ('''
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
                self.weights = nn.Linear(4, 4)
                self.name = "net"
                self.trainable = nn.Linear(4, 4)
                self.input = nn.ReLU()
                self.output = nn.Linear(4, 3)
                self.dtype = nn.Linear(4, 4)
                self.variables = nn.Parameter(torch.linspace(0.5, 1.5, 4))
                self.losses = nn.Identity()

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                x = self.input(self.dtype(self.trainable(self.weights(x))))
                return self.output(self.losses(x * self.variables))
        ''', "4"),
    "soft_keywords_and_shadowed_builtins": ('''
        class Net(nn.Module):
            def __init__(self, match=4, case=6, type=3, _=1):
                super().__init__()
                self.fc = nn.Linear(match, case)
                self.out = nn.Linear(case, type)

            def forward(self, input):
                print = self.fc(input)
                len = F.relu(print)
                max = self.out(len)
                return max
        ''', "4"),
    "strings_and_docstrings_kept_verbatim": ('''
        class Net(nn.Module):
            """{{ jinja }} {% block b %} {# c #} \\"\\"\\" \\\\ backslash \\x00 \\N{BULLET} 'quotes' \\t"""

            tag = "{{ tag }}\\n{% endblock %}"

            def __init__(self, label="{{ label }}\\\\", mode='it\\'s'):
                super().__init__()
                self.label = label + "}}"
                self.fc = nn.Linear(4, 2)  # {{ comment }} {% if x %}

            def forward(self, x):
                return self.fc(x)
        ''', "4"),
    "module_names_shadowing_the_generated_imports": ('''
        tf = 3
        np = "not numpy"
        keras = None
        math = 2.0


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x) * math + tf
        ''', "4"),
    "helper_named_like_a_runtime_function": ('''
        def relu(x):
            return F.relu(x) * 2.0


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return relu(self.fc(x)) + F.relu(x).sum(1, keepdim=True)
        ''', "4"),
    "classes_named_like_runtime_classes": ('''
        class Linear(nn.Module):
            def __init__(self, i, o):
                super().__init__()
                self.inner = nn.Linear(i, o)

            def forward(self, x):
                return self.inner(x) * 2


        class TorchModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Linear(4, 4)
                self.b = nn.Linear(4, 2)

            def forward(self, x):
                return self.b(self.a(x))
        ''', "4"),
    "star_parameters": ('''
        class Net(nn.Module):
            def __init__(self, width=3, *extra, scale=2.0, **options):
                super().__init__()
                self.scale = scale
                self.fc = nn.Linear(4, width)

            def forward(self, x, *rest, bias=0.5, **kwargs):
                return self.fc(x) * self.scale + bias
        ''', "4"),
    "attributes_named_like_runtime_names": ('''
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.load_state_dict_ = nn.Linear(4, 4)
                self.StateEntry = nn.Linear(4, 4)
                self.init_args = nn.Linear(4, 4)
                self.torch_names = nn.Linear(4, 2)

            def forward(self, x):
                return self.torch_names(self.init_args(self.StateEntry(self.load_state_dict_(x))))
        ''', "4"),
}

KNOWN_TRANSLATOR_BUGS = {}  # name -> reason; strict xfail, so a fix shows up as XPASS to remove the mark


def undefined_or_redefined_names(path):
    """pyflakes-style check of a generated file with ruff (a porter dependency): undefined or clobbered names."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select",
                             "F821,F811,F823", "--output-format", "concise", str(path)],
                            capture_output=True, text=True, timeout=120, check=False)
    return [line for line in result.stdout.splitlines() if ": F" in line]


def assert_every_python_file_compiles(out):
    for path in sorted(out.rglob("*.py")):
        compile(path.read_bytes(), str(path), "exec")


def case_params():
    for name in sorted(CASES):
        marks = [pytest.mark.xfail(reason=KNOWN_TRANSLATOR_BUGS[name], strict=True)] \
            if name in KNOWN_TRANSLATOR_BUGS else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", case_params())
def test_generated_code_is_valid_and_equivalent(porter_cli, tmp_path, name):
    import textwrap

    body, shape = CASES[name]
    source = write_source(tmp_path / f"{name}.py", HEADER + textwrap.dedent(body).lstrip("\n"))
    out = tmp_path / "out"
    result = porter_cli("convert", source, "-o", out, "--input-shape", shape)
    assert result.code == 0, result.err
    assert_every_python_file_compiles(out)
    module = out / f"{name}_keras.py"
    assert undefined_or_redefined_names(module) == []
    pair = PortedPair(out)
    inputs = pair.example_inputs(batch=2)
    for index, (want, got) in enumerate(zip(pair.run_torch(inputs), pair.run_keras(inputs), strict=True)):
        assert_equivalent(want, got, what=f"{name} output {index}")
    if name == "strings_and_docstrings_kept_verbatim":
        keras_net, torch_net = pair.keras_module.Net, pair.torch_module.Net
        assert keras_net.__doc__ == torch_net.__doc__ and keras_net.tag == torch_net.tag
        assert pair.keras_model.label == pair.torch_model.label
