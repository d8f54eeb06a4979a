"""The supported-ops table, generated from the rule registry (`porter ops`)."""

import json

from porter.rules.registry import load_all_rules

FORMATS = ("text", "markdown", "json")


def supported_names():
    """{family: sorted torch names} of every registered rule."""
    module_rules, function_rules = load_all_rules()
    rows = {}
    unique = {id(rule): rule for rule in list(module_rules.values()) + list(function_rules.values())}
    for rule in unique.values():
        rows.setdefault(rule.family or "misc", set()).update(rule.names)
    return {family: sorted(rows[family]) for family in sorted(rows)}


def coverage_table(fmt="text"):
    """`text`: one `family<TAB>name` line per op (greppable); `markdown`: the README's table; `json`:
    {family: [names]}."""
    rows = supported_names()
    if fmt == "json":
        return json.dumps(rows, indent=2)
    if fmt == "text":
        return "\n".join(f"{family}\t{name}" for family, names in rows.items() for name in names)
    lines = ["| family | torch names |", "|---|---|"]
    for family, names in rows.items():
        lines.append(f"| {family} | {', '.join(f'`{n}`' for n in names)} |")
    total = sum(len(names) for names in rows.values())
    lines += ["", f"{total} torch names in {len(rows)} families"]
    return "\n".join(lines)

