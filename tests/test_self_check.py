"""porter checks its own output: a port reported as converted (exit 0) or partial (exit 1) always imports; output
that fails the check is an internal error (exit 3) and nothing is written."""

import subprocess
import sys
import textwrap

import pytest

from porter.errors import InternalError
from porter.self_check import check_generated

# Real-style model files: the constructs people write that a translator meets in the wild.
REAL_STYLE_SOURCES = {
    "annotated_signature": '''
        from typing import Any, Callable, Optional
        import torch
        from torch import nn, Tensor

        class Block(nn.Module):
            def __init__(
                self,
                channels: int = 8,  # width
                norm_layer: Optional[Callable[..., nn.Module]] = None,
                **kwargs: Any,
            ) -> None:
                super().__init__()
                if norm_layer is None:
                    norm_layer = nn.BatchNorm2d
                self.conv = nn.Conv2d(3, channels, 3, padding=1)
                self.bn = norm_layer(channels)

            def forward(self, x: Tensor) -> Tensor:
                return torch.relu(self.bn(self.conv(x)))
    ''',
    "decorated_and_factory": '''
        import torch
        import torch.nn as nn
        from functools import partial

        class Net(nn.Module):
            def __init__(self, num_classes=10, *, dropout: float = 0.5):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
                self.fc = nn.Linear(8, num_classes)
                self.norm = partial(nn.LayerNorm, eps=1e-6)(8)

            @torch.jit.ignore
            def helper(self):
                return 1

            def forward(self, x):
                x = torch.flatten(self.features(x), 1)
                return self.fc(self.norm(x))

        def net(*, weights=None, progress: bool = True, **kwargs) -> Net:
            return Net(**kwargs)
    ''',
    "third_party_helper": '''
        import torch.nn as nn
        from somewhere.utils import log_usage

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                log_usage(self)
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)
    ''',
}


def test_check_generated_accepts_good_code():
    check_generated({"m.py": "import math\n\nx = math.pi\n", "README.md": "not python"})


def test_check_generated_reports_syntax_error_with_generated_line():
    with pytest.raises(InternalError) as caught:
        check_generated({"m.py": "x = 1\ndef f(,,):\n    pass\n"})
    assert caught.value.path == "m.py" and caught.value.line == 2
    assert "does not compile" in str(caught.value)


def test_check_generated_reports_undefined_name():
    with pytest.raises(InternalError) as caught:
        check_generated({"m.py": "import math\n\n\ndef f():\n    return nn.Linear(1, 2)\n"})
    assert caught.value.line == 5 and "`nn`" in str(caught.value)


def test_a_name_a_loop_reads_before_binding_it_is_not_undefined():
    """Res2Net's split loop reads `sp` on later turns only (`sp = spx[i] if i == 0 else sp + spx[i]`): ruff's F821
    reports it, yet it runs, in the source as in the port; a name nothing binds is still reported."""
    loop = ("def f(parts):\n    for i in range(len(parts)):\n        sp = parts[i] if i == 0 else sp + parts[i]\n"
            "        out = sp if i == 0 else out + sp\n    return out\n")
    check_generated({"m.py": loop})
    with pytest.raises(InternalError) as caught:
        check_generated({"m.py": loop.replace("else sp + parts[i]", "else spx + parts[i]")})
    assert caught.value.line == 3 and "`spx`" in str(caught.value)


@pytest.mark.parametrize("name", sorted(REAL_STYLE_SOURCES))
def test_reported_ports_import(tmp_path, name):
    """Whatever porter makes of a real-style file, exit 0/1 means the model module imports; exit 3 means a porter
    bug, reported in one line, with nothing written."""
    source = tmp_path / f"{name}.py"
    source.write_text(textwrap.dedent(REAL_STYLE_SOURCES[name]))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(source), "-o", str(out)],
                            capture_output=True, text=True)
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1, 3), result.stderr
    if result.returncode == 3:
        assert result.stderr.startswith("porter: internal error:") and len(result.stderr.splitlines()) == 1
        assert not out.exists()
        return
    module = out / f"{name}_keras.py"
    probe = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('m', sys.argv[1]); "
             "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)")
    imported = subprocess.run([sys.executable, "-c", probe, str(module)], capture_output=True, text=True,
                              cwd=tmp_path, env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": ""})
    assert imported.returncode == 0, imported.stderr[-2000:]


def test_undefined_name_of_the_source_is_a_source_error(tmp_path):
    """A name the source itself never defines is the source's problem: exit 2 at the source's line."""
    source = tmp_path / "net.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(undefined_helper(x))
    '''))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(source), "-o", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"porter: error: {source}:10: undefined name `undefined_helper`")
    assert not out.exists()


def test_undefined_names_of_several_files_come_from_one_ruff_run():
    """Each file's findings stay its own, also in folders ruff skips when it walks a tree (`build/`)."""
    from porter.self_check import UndefinedName, undefined_names_in

    found = undefined_names_in({"model_keras.py": "import os\n\nx = os.sep\ny = missing\n",
                                "build/deep/helper.py": "def f():\n    return absent + 1\n",
                                "clean.py": "z = 1\n"})
    assert found == {"model_keras.py": [UndefinedName(4, "missing")],
                     "build/deep/helper.py": [UndefinedName(2, "absent")]}


def test_undefined_names_without_room_for_copies_go_through_stdin(monkeypatch):
    """A full disk while copying the modules for ruff is no internal error: each module goes through stdin."""
    from porter import self_check

    def no_room(ruff, files):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(self_check, "_undefined_names_in_folder", no_room)
    found = self_check.undefined_names_in({"model_keras.py": "y = missing\nz = gone\n", "clean.py": "z = 1\n"})
    assert found == {"model_keras.py": [self_check.UndefinedName(1, "missing"), self_check.UndefinedName(2, "gone")]}
