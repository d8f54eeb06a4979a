"""A CNN-RNN over a spectrogram (`x.permute(0, 3, 1, 2).reshape(b, t, c * f)` of the feature map, then a batch-first
GRU): the view's written product says the channels merge with the frequencies, so it runs once in torch's order for
the GRU. Before, porter guessed the channel groups merged (dims 1 and 2 stored last), wrote the result in another
order and converted it back for the GRU (2 Transposes, now 1, the reorder torch's code asks for). Matches torch at
batch 1 and 2, eagerly and under XLA; odd time lengths."""

import pytest

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_mels=16, n_class=5):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d((2, 1)),
                                  nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 1)))
        self.gru = nn.GRU(8 * (n_mels // 4), 12, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(24, n_class)

    def forward(self, spec):  # (B, 1, F, T)
        x = self.conv(spec)
        b, c, f, t = x.shape
        x = x.permute(0, 3, 1, 2).reshape(b, t, c * f)
        out, _ = self.gru(x)
        return self.fc(out.mean(1))
'''


@pytest.mark.parametrize("batch,frames", [(1, 9), (2, 20)])
def test_spectrogram_features_reach_the_gru_in_one_move(tmp_path_factory, batch, frames):
    out = snippet_ports(tmp_path_factory, SOURCE, "1,16,20")(None)
    pair = PortedPair(out, seed=batch)
    x = random_input(batch, (batch, 1, 16, frames))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 1
