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
