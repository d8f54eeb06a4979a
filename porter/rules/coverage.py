"""The supported-ops table, generated from the rule registry (`porter ops`)."""

from porter.rules.registry import load_all_rules


def coverage_table(fmt="text"):
    module_rules, function_rules = load_all_rules()
    rows = {}
    unique = {id(rule): rule for rule in list(module_rules.values()) + list(function_rules.values())}
    for rule in unique.values():
        family = rule.family or "misc"
        rows.setdefault(family, set()).update(rule.names)
    lines = []
    if fmt == "markdown":
        lines += ["| family | torch names |", "|---|---|"]
        for family in sorted(rows):
            lines.append(f"| {family} | {', '.join(f'`{n}`' for n in sorted(rows[family]))} |")
    else:
        for family in sorted(rows):
            lines.append(f"{family}: {', '.join(sorted(rows[family]))}")
    total = sum(len(names) for names in rows.values())
    lines.append("")
    lines.append(f"{total} torch names in {len(rows)} families")
    return "\n".join(lines)
