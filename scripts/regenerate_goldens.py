#!/usr/bin/env python3
"""Regenerate the golden output trees: tests/golden/<fixture>/ for every fixtures/<fixture>.py (or those named),
and the `porter ir` dumps in tests/ir/golden/.

    python scripts/regenerate_goldens.py              # all fixtures; removes goldens whose fixture is gone
    python scripts/regenerate_goldens.py lenet unet   # only these
    python scripts/regenerate_goldens.py --check      # exit 1 if any golden is out of date, writing nothing

Review the result with `git diff tests/golden` before committing.
"""

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.golden.goldens import GOLDEN, convert_fixture, fixture_names, read_tree, stale_goldens, write_golden
from tests.ir.test_ir_command import FIXTURES as IR_FIXTURES
from tests.ir.test_ir_command import GOLDEN as IR_GOLDEN
from tests.ir.test_ir_command import dump as ir_dump


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="*", metavar="FIXTURE", help="fixture names (default: all)")
    parser.add_argument("--check", action="store_true", help="only report out-of-date goldens (exit 1 if any)")
    args = parser.parse_args(argv)
    known = fixture_names()
    names = [n.removesuffix(".py") for n in args.fixtures] or known
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"no such fixture: {', '.join(unknown)} (known: {', '.join(known)})")
    changed = []
    for name in names:
        files = convert_fixture(name)
        if read_tree(GOLDEN / name) != files:
            changed.append(name)
            if not args.check:
                write_golden(name, files)
    for name in (n for n in IR_FIXTURES if n in names):  # `porter ir` dumps: tests/ir/golden/<fixture>.txt
        text = ir_dump(name)
        path = IR_GOLDEN / f"{name}.txt"
        if not path.exists() or path.read_text() != text:
            changed.append(f"ir:{name}")
            if not args.check:
                path.write_text(text)
    stale = stale_goldens() if not args.fixtures else []
    if not args.check:
        for name in stale:
            shutil.rmtree(GOLDEN / name)
    verb = "out of date" if args.check else "rewritten"
    print(f"{len(changed)} of {len(names)} golden trees {verb}{': ' + ', '.join(changed) if changed else ''}"
          f"{'; stale: ' + ', '.join(stale) if stale else ''}")
    return 1 if args.check and (changed or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
