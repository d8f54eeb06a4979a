"""Conversion work grows linearly with the model file's size (no quadratic passes), and the source is parsed once.

Work is counted, not timed: the Python and builtin function calls made during `convert` (sys.setprofile), which
other jobs on a busy machine cannot change. The part that grows with the file (calls minus a tiny file's) grows
~4.3x for 4x the lines (measured: 5.02M and 20.1M calls at 600 and 2,400 lines, 0.38M for a tiny file); a
quadratic pass would make it ~16x (a walk over the whole module per class measured 7.98x). Work inside one builtin
call (a regex over the whole text per class) counts as one call: the wall-clock times for 1k/3.5k/10k lines in
benchmarks/convert_scale.py are what show that.
"""

import ast
import sys

import libcst

from porter.convert import ConvertOptions, convert

PARSERS = {ast.parse.__code__, libcst.parse_module.__code__}

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


class Work:
    """Calls made (Python functions and builtins) and parses of a given text, counted while the block runs."""

    def __init__(self, text):
        self.text, self.calls, self.parses = text, 0, 0

    def _profile(self, frame, event, arg):
        if event in ("call", "c_call"):
            self.calls += 1
            if event == "call" and frame.f_code in PARSERS:
                self.parses += frame.f_locals.get("source") == self.text

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._previous)


def conversion_work(tmp_path, lines):
    text = model_source(lines)
    source = tmp_path / f"model_{lines}.py"
    source.write_text(text)
    assert abs(text.count("\n") - lines) < 40
    with Work(text) as work:
        conversion = convert(ConvertOptions(source, tmp_path / f"out_{lines}", input_specs=["8,8,8"]))
    assert conversion.exit_code == 0
    assert conversion.manifest["sources"][0]["classes"][-1]["name"] == "Net"
    return work


def test_conversion_work_is_linear_in_file_size(tmp_path, record_property):
    conversion_work(tmp_path, 40)  # warms imports and caches, which a first run pays for
    fixed = conversion_work(tmp_path, 40)
    small = conversion_work(tmp_path, 600)
    large = conversion_work(tmp_path, 2_400)
    ratio = (large.calls - fixed.calls) / (small.calls - fixed.calls)
    record_property("calls", {"fixed": fixed.calls, "600": small.calls, "2.4k": large.calls,
                              "growth_ratio": round(ratio, 2)})
    print(f"convert: tiny {fixed.calls} calls, 600 lines {small.calls}, 2,400 lines {large.calls}, "
          f"growth ratio {ratio:.2f}")
    assert ratio < 5, f"4x the lines took {ratio:.2f}x the calls (tiny {fixed.calls}, 600 lines {small.calls}, " \
                      f"2,400 lines {large.calls})"
    assert (fixed.parses, small.parses, large.parses) == (1, 1, 1), "the source is parsed once"
