"""porter.frontend.gluon_saved_names: a Block overriding `_collect_params_with_prefix` (GluonNLP's BERT attention
cell) saves its own parameters under the names its dict comprehension gives for their attribute names (mxnet's
`_reg_params` keys); anything porter cannot evaluate as plain string arithmetic gives no names, never runs code."""

import textwrap

import pytest

from porter.frontend.source import parse_source

CELL = '''
from mxnet.gluon import HybridBlock


class Cell(HybridBlock):
    def __init__(self, units, use_bias=True):
        super().__init__()
        with self.name_scope():
            if use_bias:
                self.query_bias = self.params.get('query_bias', shape=(units,))
            self.query_weight = self.params.get('query_weight', shape=(units, units))
            self.scale = self.params.get(name='scale_value', shape=(1,))

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = {{{key}: v for k, v in self._reg_params.items()}}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def hybrid_forward(self, F, x, query_weight, scale, query_bias=None):
        return F.FullyConnected(x, query_weight, query_bias, num_hidden=4) * scale
'''


def saved_names(tmp_path, key):
    path = tmp_path / "cell.py"
    path.write_text(textwrap.dedent(CELL.format(key=key)))
    return parse_source(path).classes["Cell"].saved_names


def test_bert_style_names_are_read(tmp_path):
    assert saved_names(tmp_path, "prefix + 'proj_' + k.replace('_', '.')") == {
        "query_bias": "proj_query.bias", "query_weight": "proj_query.weight", "scale": "proj_scale"}


def test_an_f_string_key_is_read(tmp_path):
    assert saved_names(tmp_path, "f'{prefix}old_{k}'") == {"query_bias": "old_query_bias",
                                                           "query_weight": "old_query_weight",
                                                           "scale": "old_scale"}


@pytest.mark.parametrize("key", ["prefix + k", "prefix + __import__('os').getcwd()", "prefix + str(len(k))",
                                 "prefix + k.format(open('x'))"])
def test_keys_that_rename_nothing_or_are_not_string_arithmetic_give_no_names(tmp_path, key):
    assert saved_names(tmp_path, key) == {}  # `_reg_params` is keyed by attribute: `prefix + k` renames nothing
