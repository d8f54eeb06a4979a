"""A submodule that magnifies float32 round-off (verify/localise.py `float64_capture`, `compare_submodules(exact=)`):
timm's visformer_tiny verified "outputs match, but submodules of class Attention, Block diverge": its attention's
softmax over large logits turns its input's float32 round-off (6e-6) into 1.6e-3 on the probabilities, in torch's
own float32 as in the port. A submodule whose output alone diverges now counts as equal where it is as precise as
torch's own float32 against torch in float64 (as checks.py already judged model outputs), with a note; a port that
computes it differently still fails and is localised there.
"""

from porter.cli import main

SOURCE = '''
import torch
import torch.nn as nn


class Sharpen(nn.Module):
    """The fraction of 10,000x its input: the last bits of a float32 input are all that is left."""

    def forward(self, x):
        y = x * 10000.0
        return y - torch.floor(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.mix = nn.Conv2d(8, 8, 1)
        self.sharpen = Sharpen()

    def forward(self, x):
        y = torch.exp(self.mix(torch.tanh(self.conv(x))))  # (exp and tanh: torch's and TensorFlow's differ by ulps)
        return y + 1e-7 * self.sharpen(y)
'''


def _converted(tmp_path):
    (tmp_path / "sharp.py").write_text(SOURCE)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "sharp.py"), "-o", str(out), "--class", "Net", "--input-shape",
                 "3,9,7"]) == 0
    return out


def test_round_off_a_submodule_magnifies_is_equal(tmp_path, porter_cli):
    out = _converted(tmp_path)
    result = porter_cli("verify", out, "--examples", "2")
    assert result.code == 0, result.out + result.err
    assert "explained as round-off: as precise as torch's own float32" in result.out
    assert "sharpen" in result.out


def test_a_port_computing_the_submodule_differently_still_diverges(tmp_path, porter_cli):
    out = _converted(tmp_path)
    module = out / "sharp_keras.py"
    text = module.read_text()
    assert text.count("10000.0") == 1
    module.write_text(text.replace("10000.0", "10001.0"))
    result = porter_cli("verify", out, "--examples", "2")
    assert result.code == 1, result.out + result.err
    assert "first diverging submodule: sharpen (Sharpen)" in result.out
