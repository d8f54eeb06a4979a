"""The registered rules of one rule module, for the runtime tests that check rules against their runtime."""

import importlib

from porter.rules import registry


def family_rules(family):
    """The rules `porter/rules/{family}.py` registers (registry._family names each rule's file from its frames)."""
    importlib.import_module(f"porter.rules.{family}")
    rules = list(registry.MODULE_RULES.values()) + list(registry.FUNCTION_RULES.values())
    return [rule for rule in rules if rule.family == family]
