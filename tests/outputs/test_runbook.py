"""OUT/RUNBOOK.md: the Cloud TPU VM and pod slice steps are there, and every `train_tpu.py` and `porter data` command
in it (and every train_tpu.py flag the notebook passes) parses with the real parsers: the script's parse_args and
`porter data`'s add_parser."""

import importlib.util
import json
import re
import shlex

import pytest

from porter.cli import build_parser
from porter.cli import main as porter
from tests.training.helpers import FIXTURES

FIXTURE = FIXTURES / "train_mnist.py"  # its training code has argparse flags of its own: the parser grows
SHELL_OPERATOR = re.compile(r"^[;&|<>()]+$")
VARIABLE = re.compile(r"\$(\{\w+\}|\w+)")


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    out = tmp_path_factory.mktemp("runbook") / "port"
    assert porter(["convert", str(FIXTURE), "-o", str(out)]) in (0, 1)
    return out


@pytest.fixture(scope="module")
def train_script(port):
    spec = importlib.util.spec_from_file_location("runbook_train_tpu", port / "train_tpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shell_lines(markdown):
    """Lines of the ```bash blocks, backslash continuations joined."""
    blocks = re.findall(r"```bash\n(.*?)```", markdown, re.DOTALL)
    return [line for block in blocks for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def calls(line, program):
    """Argument lists of each call of `program` (a word sequence) in a shell line, ssh --command="..." included;
    shell variables become a placeholder word."""
    tokens = list(shlex.shlex(VARIABLE.sub("x", line), posix=True, punctuation_chars=True))
    found = []
    for index, token in enumerate(tokens):
        if token.startswith("--command="):
            found.extend(calls(token.removeprefix("--command="), program))
        elif tokens[index:index + len(program)] == program or token.endswith("/" + program[0]):
            arguments = []
            for argument in tokens[index + len(program):]:
                if SHELL_OPERATOR.match(argument):
                    break
                arguments.append(argument)
            found.append(arguments)
    return found


def test_runbook_has_the_cloud_tpu_steps(port):
    text = (port / "RUNBOOK.md").read_text()
    for step in ("gcloud compute tpus tpu-vm create", "--accelerator-type", "--version", "tpu-vm scp",
                 "--worker=all", "pip install -r requirements-tpu.txt", "--worker=0", "TPU_LOAD_LIBRARY=0",
                 "--output-dir $RUN", "PREEMPTED", "tensorboard --logdir $RUN/logs", "tpu-vm delete",
                 "--hosts 4"):
        assert step in text, step
    assert "train_mnist_keras" in text and str(port) not in text and str(FIXTURES) not in text
    assert "RUNBOOK.md" in json.loads((port / "porter-manifest.json").read_text())["files"]


def test_every_command_parses_with_the_real_parsers(port, train_script):
    lines = shell_lines((port / "RUNBOOK.md").read_text())
    train_calls = [args for line in lines for args in calls(line, ["train_tpu.py"])]
    data_calls = [args for line in lines for args in calls(line, ["porter", "data"])]
    assert len(train_calls) >= 3 and len(data_calls) >= 2
    for args in train_calls:
        parsed = train_script.parse_args(args)  # an unknown flag or a bad value exits 2 here
        assert parsed.output_dir is not None
    porter_parser = build_parser()
    for args in data_calls:
        parsed = porter_parser.parse_args(["data", *args])
        assert parsed.out and parsed.sources
    pod = [args for args in data_calls if "--hosts" in args and args[args.index("--hosts") + 1] != "1"]
    assert pod, "the pod slice section writes data for several hosts"


def test_the_notebook_passes_only_flags_train_tpu_accepts(port, train_script, capsys):
    with pytest.raises(SystemExit):
        train_script.parse_args(["--help"])
    accepted = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", capsys.readouterr().out))
    notebook = json.loads((port / "train_tpu.ipynb").read_text())
    code = "\n".join("".join(cell["source"]) for cell in notebook["cells"]
                     if cell["id"] in ("parameters", "train"))  # the cells that build train_tpu.main's argv
    passed = set(re.findall(r"[\"'](--[a-z][a-z0-9-]*)[\"']", code))
    assert {"--output-dir", "--steps", "--data", "--simulate-replicas"} <= passed
    assert passed <= accepted, passed - accepted
    markdown = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    mentioned = re.findall(r"`(porter data [^`]+)`", markdown)
    assert mentioned
    for command in mentioned:
        assert build_parser().parse_args(shlex.split(command)[1:]).command == "data"
