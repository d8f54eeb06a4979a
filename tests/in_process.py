"""`porter.convert.convert` for the tests that convert in process, run under the collector settings `porter convert`
gives it (porter/gc_tuning.py): the same conversion, the same result.

`porter.cli.main` wraps each command in `fewer_collections` and pauses the collector over the parse, whose objects it
then freezes (`settled`, called by `convert` itself); a test calling `convert` directly got neither, so every
older-generation collection during a conversion rescanned the whole test process (TensorFlow, torch, the networks
a module keeps): on tests/corpus/test_timm.py 30 full collections where the CLI's settings leave about none. The
settings are restored and the frozen objects handed back to the collector when the conversion returns or raises.
tests/test_gc_tuning.py checks those settings themselves; tests of `convert` outside a command (the collector left
running: test_gc_tuning.py, tests/test_forked.py, tests/test_determinism.py) keep calling porter.convert.convert.
"""

from porter.convert import convert as _convert
from porter.gc_tuning import fewer_collections, pause_until_settled


def convert(options, read_only=False):
    """porter.convert.convert(options, read_only) as `porter convert` runs it (its collector settings)."""
    with fewer_collections():
        pause_until_settled()
        return _convert(options, read_only=read_only)


def convert_file_of_package(options):
    """`porter convert FILE` in process for a file of a package (porter.package.convert_with_siblings: the model
    files it takes definitions from are converted beside it), under the same collector settings."""
    from porter.package import convert_with_siblings

    with fewer_collections():
        pause_until_settled()
        return convert_with_siblings(options)
