"""Op rules, one module per op family; `registry.load_all_rules()` imports them all."""
