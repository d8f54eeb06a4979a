"""The context rules get (porter/rules/context.py): the dispatcher passes a RuleContext, never the translator; the
context exposes only its declared methods; no rule names the translator. (That rules never import porter.passes,
function-level imports included, is tests/test_imports.py.)"""

import ast
import dataclasses
import textwrap
from pathlib import Path

import pytest

from porter.convert import choose_main_class
from porter.frontend.source import parse_source
from porter.frontend.training_code import read_training_code
from porter.passes.classes import FileTranslator
from porter.passes.context import FileContext
from porter.rules.context import RuleContext
from porter.rules.registry import FUNCTION_RULES, load_all_rules

RULES = Path(__file__).resolve().parents[2] / "porter" / "rules"
API = {"runtime", "join_args", "unsupported", "plain", "to_layout", "unify", "compared", "dim_size", "layout_flag",
       "variables", "function_rule", "apply_declarative"}
SOURCE = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.roll(self.conv(x), 1, dims=1)
"""


def translate(tmp_path, code):
    """Translate `code` as `porter convert` does (nothing written); the file's context."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(code).lstrip("\n"))
    source = parse_source(path, path.name)
    trained, _ = read_training_code(source)
    ctx = FileContext(source, main_class=choose_main_class(source, None, trained))
    FileTranslator(ctx, {}).translate(ctx.main_class)
    return ctx


def test_the_dispatcher_passes_a_rule_context(tmp_path, monkeypatch):
    load_all_rules()
    rule, seen = FUNCTION_RULES["torch.roll"], []

    def spy(ctx, call):
        seen.append(ctx)
        return rule.translate(ctx, call)

    monkeypatch.setitem(FUNCTION_RULES, "torch.roll", dataclasses.replace(rule, translate=spy))
    ctx = translate(tmp_path, SOURCE)
    assert seen and all(type(context) is RuleContext for context in seen)
    assert "roll" in ctx.used_runtime  # the rule ran through the context to the end


def test_the_context_exposes_only_its_api():
    assert {name for name in dir(RuleContext) if not name.startswith("_")} == API
    for name in API:
        assert getattr(RuleContext, name).__doc__, f"RuleContext.{name} has no docstring"

    class Translator:  # what a rule could reach through a context that passed attributes on
        ctx, env, line = object(), {}, 1

        def as_plain(self, value):
            return value

    context = RuleContext(Translator())
    for name in ("ctx", "env", "line", "as_plain", "declarative_rule", "stub", "expr"):
        with pytest.raises(AttributeError):
            getattr(context, name)
    with pytest.raises(AttributeError):
        context.anything = 1  # __slots__: nothing is added after construction
    assert context.plain("value") == "value" and context.variables() == {}


def test_no_rule_names_the_translator():
    offenders = []
    for path in sorted(RULES.glob("*.py")):
        if path.name == "context.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.arg) and node.arg == "translator" or \
                    isinstance(node, ast.Name) and node.id == "translator" or \
                    isinstance(node, ast.Attribute) and node.attr == "_translator":
                offenders.append(f"porter/rules/{path.name}:{node.lineno}")
    assert not offenders, "rules take the RuleContext (`ctx`), not the translator:\n" + "\n".join(offenders)
