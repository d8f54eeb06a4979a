"""Semantic-adjustment notes: derived from the source arguments, the rule and the generated code, on the right line."""

from tests.report.helpers import convert_snippet, notes_of, report_of


def _notes(tmp_path, code, **options):
    report = report_of(convert_snippet(tmp_path, code, **options))
    return report, notes_of(report)


def _one(notes, *needles):
    found = [n for n in notes if all(needle in n.text for needle in needles)]
    assert len(found) == 1, f"expected one note with {needles}, got {[n.text for n in notes]}"
    return found[0]


def test_batchnorm_momentum_convention_and_eps(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(8, momentum=0.01, eps=1e-3)
                self.bn_default = nn.BatchNorm1d(8)

            def forward(self, x):
                return self.bn(x)
    """)
    custom = _one(notes, "`BatchNorm2d` momentum 0.01 → Keras momentum 0.99")
    assert custom.line == 9 and "eps 1e-3" in custom.text and custom.kind == "numerics"
    default = _one(notes, "`BatchNorm1d` momentum 0.1 → Keras momentum 0.9")
    assert default.line == 10 and "eps 1e-05" in default.text


def test_strided_conv_padding_is_explicit_and_same_padding_is_said(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
                self.keep = nn.Conv2d(8, 8, kernel_size=3, padding=1)
                self.valid = nn.Conv2d(8, 8, 1)

            def forward(self, x):
                return self.valid(self.keep(self.down(x)))
    """)
    strided = _one(notes, "padding=1 with stride 2")
    assert strided.line == 9 and "explicitly" in strided.text and "asymmetrically" in strided.text
    same = _one(notes, "padding=1, stride 1")
    assert same.line == 10 and "'SAME'" in same.text
    assert not [n for n in notes if n.line == 11 and n.kind == "padding"]  # no padding, nothing to say
    assert len([n for n in notes if n.kind == "weights" and "transposed once" in n.text]) == 3


def test_pool_padding_uses_minus_infinity_and_avg_pool_counts_padding(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = nn.MaxPool2d(3, stride=2, padding=1)
                self.avg = nn.AvgPool2d(3, stride=1, padding=1)

            def forward(self, x):
                return self.avg(self.pool(x)) + F.max_pool2d(x, 2)
    """)
    assert "−inf" in _one(notes, "`MaxPool2d` padding=1").text
    assert "count_include_pad=True" in _one(notes, "`AvgPool2d` padding=1").text
    assert not [n for n in notes if "max_pool2d" in n.text]  # no padding: nothing to say


def test_recurrent_gate_order_and_batch_first(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16, batch_first=True)
                self.lstm = nn.LSTM(16, 16)

            def forward(self, x):
                y, _ = self.gru(x)
                return y
    """)
    gru = _one(notes, "`GRU`: gates in torch's order r, z, n")
    assert gru.line == 9 and "reset_after=True" in gru.text
    _one(notes, "`LSTM`: gates in torch's order i, f, g, o")
    _one(notes, "`LSTM` batch_first=False")
    assert not [n for n in notes if "`GRU` batch_first" in n.text]


def test_layernorm_formulation(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self, width=16):
                super().__init__()
                self.norm = nn.LayerNorm(width, eps=1e-6)
                self.norm2 = nn.LayerNorm((4, 16))

            def forward(self, x):
                return self.norm(x)
    """)
    first = _one(notes, "`LayerNorm` normalizes the trailing dim(s) `width` gives")
    assert "eps 1e-6" in first.text and "rsqrt(var + eps)" in first.text
    _one(notes, "`LayerNorm` normalizes the last 2 dims")


def test_layout_conversions_and_remapped_axes_are_said_on_their_lines(tmp_path):
    report, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)

            def forward(self, x):
                y = self.conv(x)
                y = torch.cat([y, y], dim=1)
                return y.mean(dim=(2, 3))
    """, input_specs=["3,16,16"])
    axis = _one(notes, "`torch.cat` dim 1 → 3")
    assert axis.line == 13 and axis.kind == "axis"
    _one(notes, "`.mean` dim (2, 3) → (1, 2)")
    entry = _one(notes, "converted to channels-last")
    assert entry.kind == "layout"
    rows = {row.source_start: row for walk in report.classes[0].walks for row in walk.rows}
    assert any("`torch.cat` dim 1 → 3" in n.text for n in rows[13].notes)  # placed on the row it explains


def test_dropout_and_self_training(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.drop = nn.Dropout(0.5)

            def forward(self, x):
                x = F.dropout(self.fc(x), 0.2, training=self.training)
                return self.drop(x)
    """)
    _one(notes, "`Dropout`: active only when `training` is true")
    assert _one(notes, "`self.training` → the `training` argument").line == 13


def test_untranslated_calls_say_nothing(tmp_path):
    conversion = convert_snippet(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return torch.special.zeta(self.fc(x), x)
    """)
    report = report_of(conversion)
    assert report.stub_count == 1
    assert not [n for n in notes_of(report) if "zeta" in n.text]


def test_tables_the_tpu_embedding_api_can_serve_say_so(tmp_path):
    _, notes = _notes(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.tags = nn.Embedding(50, 8, sparse=True)
                self.bag = nn.EmbeddingBag(50, 8, mode="sum")
                self.bag_max = nn.EmbeddingBag(50, 8, mode="max")
                self.small = nn.Embedding(50, 8)

            def forward(self, ids):
                return self.tags(ids).sum(1) + self.bag(ids) + self.bag_max(ids) + self.small(ids).sum(1)
    """)
    assert _one(notes, "`Embedding` sparse=True", "TPU embedding API").line == 9
    assert _one(notes, "`EmbeddingBag`: a dense Keras table here").line == 10
    assert _one(notes, "mode='max'", "keeps this table a dense Keras table").line == 11
    assert not [n for n in notes if n.line == 12]  # neither sparse nor a bag: nothing to say
