"""Static conversion never imports, execs or evals the input: a file full of side effects converts and none run."""

import sys

import pytest

from tests.robustness.conftest import write_source

SIDE_EFFECTS = '''
import os
import pathlib
import sys

import pytest

import torch
import torch.nn as nn

pathlib.Path({marker!r}, "top_level").write_text("ran")
os.system("touch " + os.path.join({marker!r}, "os_system"))
exec("open(os.path.join({marker!r}, 'exec'), 'w').close()")
sys.modules["torch"] = None  # would break any later `import torch` in the converting process


def helper(width=open(os.path.join({marker!r}, "function_default"), "w")):
    return nn.Linear(width, width)


def decorate(cls):
    open(os.path.join({marker!r}, "decorator"), "w").close()
    return cls


@decorate
class Net(nn.Module):
    side_effect = open(os.path.join({marker!r}, "class_body"), "w")

    def __init__(self, width=8, log=open(os.path.join({marker!r}, "init_default"), "w")):
        super().__init__()
        open(os.path.join({marker!r}, "init_body"), "w").close()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


if __name__ == "__main__":
    open(os.path.join({marker!r}, "main_block"), "w").close()
'''


def test_side_effects_never_run(porter_cli, tmp_path):
    marker = tmp_path / "markers"
    marker.mkdir()
    source = write_source(tmp_path / "side_effects.py", SIDE_EFFECTS.format(marker=str(marker)))
    modules_before = set(sys.modules)
    result = porter_cli("convert", source, "-o", tmp_path / "out", "--input-shape", "8")
    assert result.code in (0, 1), result.err
    assert list(marker.iterdir()) == [], "conversion ran code from the source"
    assert sys.modules.get("torch", "absent") is not None
    assert not any("side_effects" == name.rsplit(".", 1)[-1] for name in set(sys.modules) - modules_before)
    assert (tmp_path / "out" / "side_effects_keras.py").is_file()


def test_training_script_section_is_read_not_run(porter_cli, tmp_path):
    marker = tmp_path / "trained"
    source = write_source(tmp_path / "train.py", f'''
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)


        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(16, 4)).sum()
            loss.backward()
            optimizer.step()
        open({str(marker)!r}, "w").write("trained")
        ''')
    result = porter_cli("convert", source, "-o", tmp_path / "out")
    assert result.code in (0, 1), result.err
    assert not marker.exists()


def test_convert_imports_no_framework(tmp_path):
    """Without --weights, `convert` imports neither torch nor TensorFlow/Keras nor mxnet (DESIGN.md)."""
    import subprocess
    from pathlib import Path

    from tests.robustness.conftest import MINIMAL_MODEL

    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    probe = ("import sys\nfrom porter.cli import main\n"
             f"code = main(['convert', {str(source)!r}, '-o', {str(tmp_path / 'out')!r}, '--input-shape', '4'])\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'tensorflow', 'keras', 'mxnet', 'jax'}),"
             " code)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                            cwd=Path(__file__).resolve().parents[2], check=False)
    assert result.stdout.strip().splitlines()[-1] == "[] 0", result.stdout + result.stderr


@pytest.mark.xfail(strict=True, reason="translator carries class-body statements and default-argument expressions "
                                       "verbatim (reported to the lead): importing the port, as --weights does, "
                                       "runs them")
def test_the_port_does_not_carry_side_effects(porter_cli, tmp_path):
    """Importing the generated module (what --weights and every user does) must not run the source's side effects:
    class-body statements and default arguments that do I/O are not model code."""
    from porter.verify.harness import import_path

    marker = tmp_path / "markers"
    marker.mkdir()
    source = write_source(tmp_path / "carried.py", f'''
        import torch.nn as nn


        class Net(nn.Module):
            log = open({str(marker / "class_body")!r}, "w")

            def __init__(self, width=4, sink=open({str(marker / "default_argument")!r}, "w")):
                super().__init__()
                self.fc = nn.Linear(4, width)

            def forward(self, x):
                return self.fc(x)
        ''')
    result = porter_cli("convert", source, "-o", tmp_path / "out", "--input-shape", "4")
    assert result.code in (0, 1), result.err
    assert list(marker.iterdir()) == []
    import_path(tmp_path / "out" / "carried_keras.py").Net()
    assert list(marker.iterdir()) == [], "the generated module ran the source's side effects"
