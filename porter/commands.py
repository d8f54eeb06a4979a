"""Subcommands beyond `convert` and `ops`, each in its own module; the CLI picks them up from here.

Each module `porter/<command>_command.py` defines `add_parser(subparsers)` and `run(args) -> exit code`.
"""

import importlib

COMMAND_MODULES = ("porter.verify.command", "porter.diff_command", "porter.data_command")


def _load():
    loaded = {}
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        loaded[module.COMMAND] = module
    return loaded


COMMANDS = _load()
EXTRA_COMMANDS = {name: module.run for name, module in COMMANDS.items()}
