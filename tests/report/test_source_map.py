"""Locating a translated statement in the formatted module despite what the formatter changed."""

import textwrap

from porter.report.source_map import GeneratedText

MODULE = textwrap.dedent('''\
    class Net(TorchModule):
        def __init__(
            self, width=16, depth=2, **kwargs
        ):
            super().__init__(**kwargs)
            self.conv = Conv2d(
                3,
                width,
                kernel_size=3,
                padding=1,
            )

        def call(self, x, training=None):
            # keep this comment
            y = self.conv(to_channels_last(x))
            z = {"key": "value"}  # trailing
            return (
                to_channels_first(y)
            )


    class Other(TorchModule):
        pass
''')


def test_class_and_method_ranges_follow_wrapped_headers():
    text = GeneratedText(MODULE)
    assert text.class_range("Net") == (1, 19)
    assert text.method_range(text.class_range("Net"), "__init__") == (2, 11)
    assert text.method_range(text.class_range("Net"), "call") == (13, 19)
    assert text.class_range("Missing") is None


def test_locate_ignores_layout_quotes_trailing_commas_and_added_parentheses():
    text = GeneratedText(MODULE)
    assert text.locate("self.conv = Conv2d(3, width, kernel_size=3, padding=1)", 5, 11) == (6, 11)
    assert text.locate("z = {'key': 'value'}", 13, 19) == (16, 16)
    assert text.locate("return to_channels_first(y)", 13, 19) == (17, 19)
    assert text.locate("super().__init__()", 5, 11) == (5, 5)  # rewritten to pass **kwargs through


def test_locate_searches_only_the_given_range():
    text = GeneratedText(MODULE)
    assert text.locate("y = self.conv(to_channels_last(x))", 1, 11) is None
    assert text.locate("y = self.conv(to_channels_last(x))", 13, 18) == (15, 15)


EDGE_CASES = [
    "x = (1,\n", "x = 1 + \\", 'x = "abc', 'x = """abc', "x = 1)", "  x = 1\ny = 2", "if x:\n    y\n  z", "a $ b",
    'x = f"{a!r}"', "x = 1 if y else 2  # c", "# only\n", "", "\n\n", "x = [\n1,\n]", "if x:\n    y\n", "x = a ? b",
    "x = 1\n\n# tail\n", "def f():\n\treturn 1\n", "x = 'it''s'", "y = b'\\x00' + rb'a'", "z = 1_000j ** -2.5e3",
    "async def f():\n    await g(...)\n", "w = x @ y; v := 3", "u = {**a, 'k': [*b]}\n",
]


def test_the_c_tokenizer_is_read_as_tokenize_reads_the_text(monkeypatch):
    """Statements are placed from CPython's C tokenizer (Python 3.11) only where it reads a text as `tokenize`
    does: the generated files of every golden port and texts either tokenizer reads otherwise give the same tokens."""
    from pathlib import Path

    from porter.report import source_map

    golden = Path(__file__).resolve().parents[1] / "golden"
    texts = EDGE_CASES + [path.read_text() for path in sorted(golden.glob("*/*.py"))]
    fast = [source_map._tokens(text) for text in texts]
    if source_map._C_TOKENIZER is not None:  # the generated files are read by the C tokenizer
        assert sum(source_map._c_tokens(text) is not None for text in texts) >= len(texts) - len(EDGE_CASES)
    monkeypatch.setattr(source_map, "_C_TOKENIZER", None)
    assert fast == [source_map._tokens(text) for text in texts]
