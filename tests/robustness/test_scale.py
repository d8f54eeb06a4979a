"""A 10,000-line model file converts in time linear in its size (no quadratic passes).

Conversion CPU time (process time: other jobs on a busy machine do not count) is measured in-process at
~2,500 and ~10,000 lines; the part that grows with the file (time minus a tiny file's) may grow ~4x for 4x the
lines, and must stay under 6x.
"""

import time

from porter.convert import ConvertOptions, convert

BLOCK = '''
class Block{k}(nn.Module):
    """Residual block number {k}."""

    def __init__(self, channels={channels}, expansion=2):
        super().__init__()
        hidden = channels * expansion
        self.conv1 = nn.Conv2d(channels, hidden, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.conv2 = nn.Conv2d(hidden, channels, kernel_size=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        # residual unit {k}
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.drop(self.bn2(self.conv2(y)))
        y = y + x
        return torch.relu(y) * 0.5 + x.mean(dim=1, keepdim=True)

'''

MAIN = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([{blocks}])
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=[2, 3]))
'''


def model_source(lines):
    """A model file of about `lines` lines: many block classes, a main class using every eighth of them."""
    header = ('"""A large generated model file."""\n\n'
              "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n")
    parts = [header]
    count = 0
    while count * BLOCK.count("\n") < lines - 20:
        parts.append(BLOCK.format(k=len(parts) - 1, channels=8 + (len(parts) - 1) % 8))
        count += 1
    parts.append(MAIN.format(blocks=", ".join(f"Block{i}(8)" for i in range(0, count, 8))))
    return "".join(parts)


def conversion_seconds(tmp_path, lines):
    source = tmp_path / f"model_{lines}.py"
    source.write_text(model_source(lines))
    assert abs(source.read_text().count("\n") - lines) < 40
    start = time.process_time()
    conversion = convert(ConvertOptions(source, tmp_path / f"out_{lines}", input_specs=["8,8,8"]))
    elapsed = time.process_time() - start
    assert conversion.exit_code == 0
    assert conversion.manifest["sources"][0]["classes"][-1]["name"] == "Net"
    return elapsed


def test_conversion_time_is_linear_in_file_size(tmp_path, record_property):
    fixed = min(conversion_seconds(tmp_path, 40) for _ in range(2))  # also warms imports and caches
    small = min(conversion_seconds(tmp_path, 2_500) for _ in range(2))  # the first run still warms caches
    large = conversion_seconds(tmp_path, 10_000)
    ratio = (large - fixed) / max(small - fixed, 1e-3)
    record_property("seconds", {"fixed": round(fixed, 2), "2.5k": round(small, 2), "10k": round(large, 2),
                                "growth_ratio": round(ratio, 2)})
    print(f"convert: tiny {fixed:.2f}s, 2.5k lines {small:.2f}s, 10k lines {large:.2f}s, growth ratio {ratio:.2f}")
    assert ratio < 6, f"10k lines took {large:.1f}s vs {small:.1f}s for 2.5k (fixed cost {fixed:.1f}s)"
