"""The golden trees under tests/golden/<fixture>/ are data, not tests: never collect anything inside them."""

collect_ignore_glob = ["*/*"]
