"""Subcommands beyond `convert` and `ops`, each in its own module; the CLI picks them up from here.

Each module `porter/<command>_command.py` defines `add_parser(subparsers)` and `run(args) -> exit code`.
"""

from porter.plugins import load_present

COMMAND_MODULES = ("porter.verify.command", "porter.diff_command", "porter.data_command", "porter.ir_command")

COMMANDS = {module.COMMAND: module for module in load_present(COMMAND_MODULES)}
EXTRA_COMMANDS = {name: module.run for name, module in COMMANDS.items()}
