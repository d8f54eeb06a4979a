"""A `for i in range(...)` loop's variable is a Python int: `y[:, :, i]` of an image held channels-last drops its
dim where it is stored (`y[:, i]`), keeps the layout and its rank is known. Before, the index was an unknown value:
the image went back to torch's order on every turn (a row-wise Linear over a 16-row map traced 49 Transposes, now the
boundary's 2). Matches torch at batch 1 and 2, eagerly and under XLA."""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.row = nn.Linear(4, 4)

    def forward(self, x):
        y = self.conv(x)
        rows = []
        for i in range(y.size(2)):
            r = y[:, :, i]  # (B, C, W)
            rows.append(self.row(r.transpose(1, 2)).transpose(1, 2))
        columns = [y[:, :, :, j].mean(-1, keepdim=True) for j in range(y.shape[3])]
        return torch.stack(rows, dim=2) + torch.cat(columns, 2).unsqueeze(2)
'''


@pytest.mark.parametrize("batch", [1, 2])
def test_range_loop_index_keeps_the_layout(tmp_path_factory, batch):
    out = snippet_ports(tmp_path_factory, SOURCE, "3,7,5")(None)
    assert "to_channels_first" not in (out / "op_model_keras.py").read_text()
    assert_matches_converting_at_the_boundary(PortedPair(out, seed=batch), random_input(batch, (batch, 3, 7, 5)))
