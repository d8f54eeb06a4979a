"""porter/frontend/factory_values.py: what a factory's values are after its statements, read as code."""

import libcst as cst

from porter.frontend.factory_values import KWARGS, default_keyword_read, node_code, updated_display


def statement(code):
    return cst.parse_statement(code).body[0]


def test_a_dict_filled_key_by_key_and_a_list_extended_are_followed():
    bound = {"cfg": cst.parse_expression("{}"), "info": cst.parse_expression("[1]")}
    for code in ('cfg["block"] = Block', 'cfg.update(depth=2)', 'cfg["block"] = Other', 'info.extend([2, 3])',
                 'info.append(4)', 'cfg.setdefault("depth", 5)', 'cfg.setdefault("width", 6)'):
        assert updated_display(statement(code), bound), code
    assert node_code(bound["cfg"]) == """{"width": 6, 'depth': 2, "block": Other}"""  # (a key set again moves last)
    assert node_code(bound["info"]) == "[1, 2, 3, 4]"


def test_a_dict_another_name_holds_is_not_followed():
    display = cst.parse_expression("{}")
    bound = {"cfg": display, "alias": display}
    assert not updated_display(statement('cfg["block"] = Block'), bound)


def test_keys_the_user_may_give_are_read_from_their_keyword_arguments():
    """`kwargs.pop("features_only", False)` over the generated factory's own, or over a dict merging them with keys
    of the factory's that do not hold the key; a key the factory sets is not the user's."""
    merged = cst.parse_expression(f'{{"block_args": blocks, **{KWARGS}}}')
    for bound in ({"kwargs": cst.Name(KWARGS)}, {"kwargs": merged}):
        assert default_keyword_read(cst.parse_expression('kwargs.pop("features_only", False)'), bound) == \
            "features_only"
    assert default_keyword_read(cst.parse_expression('kwargs.get("block_args")'), {"kwargs": merged}) is None
    assert default_keyword_read(cst.parse_expression('kwargs.pop("x")'), {"kwargs": cst.parse_expression("{}")}) \
        is None
