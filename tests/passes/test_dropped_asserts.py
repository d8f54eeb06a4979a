"""An assert on tensor values is dropped (TensorFlow cannot compile a data-dependent check) with a comment quoting
it; an assert written over several lines (GluonNLP's `assert list(self.tgt_proj.params.values())[0] \\` and its
continuation) was quoted as written, its second line outside the comment: the port did not compile (exit 3). The
quote is now one line."""

import textwrap

from porter.convert import ConvertOptions, convert

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)

    def forward(self, x):
        y = self.a(x)
        assert (y.sum() > -1e9) \\
            == (x.sum() > -1e9)
        assert torch.isfinite(y).all(), (
            "not finite")
        return y
'''


def test_a_multiline_assert_is_quoted_on_one_line(tmp_path):
    path = tmp_path / "asserts.py"
    path.write_text(textwrap.dedent(SOURCE))
    conversion = convert(ConvertOptions(path, tmp_path / "out", input_specs=["4"]))
    assert conversion.exit_code == 0
    code = conversion.files["asserts_keras.py"]
    quoted = [line for line in code.splitlines() if "assert on tensor values dropped" in line]
    assert len(quoted) == 2 and "(y.sum() > -1e9) == (x.sum() > -1e9)" in quoted[0]
