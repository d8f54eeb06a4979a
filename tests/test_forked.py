"""porter/forked.py: work in a forked child, and `porter convert`'s reports rendered that way (ConvertOptions.
reports_aside, what the command line sets) are the files the in-order conversion writes."""

import os

import pytest

from porter import forked
from porter.convert import ConvertOptions, convert
from tests.golden.goldens import FIXTURES, GOLDEN, read_tree

needs_fork = pytest.mark.skipif(not forked.can_fork(), reason="porter forks only on Linux")


@needs_fork
def test_the_child_returns_its_work():
    parent = os.getpid()
    child = forked.Forked(lambda: {"pid": os.getpid(), "text": "x" * 200_000})  # more than a pipe's buffer
    result = child.result()
    assert result["pid"] != parent and result["text"] == "x" * 200_000


@needs_fork
def test_a_failing_child_gives_none():
    def fails():
        raise ValueError("no")

    assert forked.Forked(fails).result() is None
    assert forked.Forked(lambda: object()).result() is None  # not marshal-able


@needs_fork
def test_an_abandoned_child_is_stopped():
    import time

    child = forked.Forked(lambda: time.sleep(60))
    pid = child.pid
    child.abandon()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped


@needs_fork
def test_a_conversation_answers_in_stages():
    """A conversation child sends several answers and hears what the parent tells it between them."""
    def talk(channel):
        channel.send(("first", os.getpid()))
        told = channel.receive()
        channel.send({"echo": told, "text": "y" * 200_000})  # more than a pipe's buffer

    child = forked.Forked(talk, conversation=True)
    first, pid = child.receive()
    assert first == "first" and pid != os.getpid()
    assert child.tell(["x" * 200_000, 3])
    assert child.result() == {"echo": ["x" * 200_000, 3], "text": "y" * 200_000}
    assert child.pid is None  # reaped


@needs_fork
def test_a_conversation_that_fails_gives_none():
    def talk(channel):
        channel.send(1)
        if channel.receive() == "fail":
            raise ValueError("no")
        channel.send(2)

    child = forked.Forked(talk, conversation=True)
    assert child.receive() == 1 and child.tell("fail")
    assert child.result() is None and child.receive() is None  # ended: nothing more
    assert not child.tell("more")

    child = forked.Forked(lambda channel: None, conversation=True)
    assert child.receive() is None  # ended without an answer


@needs_fork
def test_a_parent_that_tells_nothing_ends_the_conversation():
    told = []

    def talk(channel):
        channel.send("ready")
        told.append(channel.receive())
        channel.send(told)

    child = forked.Forked(talk, conversation=True)
    assert child.receive() == "ready"
    child._asks.close()  # the parent's end closed: the child hears None
    assert child.result() == [None]


@needs_fork
def test_an_abandoned_conversation_is_stopped():
    import time

    child = forked.Forked(lambda channel: time.sleep(60), conversation=True)
    pid = child.pid
    child.abandon()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped
    assert child.receive() is None and not child.tell(1)


def test_without_fork_nothing_starts(monkeypatch):
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    child = forked.Forked(lambda: 1)
    assert child.pid is None and child.result() is None


@needs_fork
@pytest.mark.parametrize("name", ["resnet", "gpt_mini", "lstm_tagger", "train_mnist"])
def test_reports_aside_write_the_golden_files(name):
    conversion = convert(ConvertOptions(FIXTURES / f"{name}.py", GOLDEN / name, reports_aside=True))
    assert conversion.files == read_tree(GOLDEN / name)


@needs_fork
def test_a_report_that_fails_fails_as_in_order(monkeypatch):
    """The child's failure is not the answer: the parent renders the reports itself and meets the same error."""
    import porter.report.porting_md

    def broken(*args, **kwargs):
        raise RuntimeError("report broke")

    monkeypatch.setattr(porter.report.porting_md, "render_porting_md", broken)
    with pytest.raises(RuntimeError, match="report broke"):
        convert(ConvertOptions(FIXTURES / "lenet.py", GOLDEN / "lenet", reports_aside=True))


TPU_LINTED = '''import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if x.sum().item() > 0:
            x = x.double()
        return self.fc(x.float())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        y = self.block(x)
        z = torch.zeros(int(y.shape[0]), 3, dtype=torch.float64)
        print(y.mean().item())
        return self.out(y) + z.float()
'''


def _lint_outcome(conversion):
    return conversion.files, {name: ir.tpu_findings for name, ir in conversion.translator.ctx.irs.items()}


@needs_fork
def test_the_tpu_lint_aside_finds_what_it_finds_in_order(tmp_path):
    """The forked TPU lint (ConvertOptions.reports_aside) gives the manifest's findings and each class's, in order."""
    source = tmp_path / "net.py"
    source.write_text(TPU_LINTED)
    aside = convert(ConvertOptions(source, tmp_path / "out", input_specs=["8"], reports_aside=True))
    files, findings = _lint_outcome(aside)
    assert (files, findings) == _lint_outcome(convert(ConvertOptions(source, tmp_path / "out", input_specs=["8"])))
    assert [(f.line, f.class_name) for f in findings["Block"] + findings["Net"]] == [
        (11, "Block"), (12, "Block"), (24, "Net"), (25, "Net")]


@needs_fork
def test_a_tpu_lint_that_fails_fails_as_in_order(monkeypatch, tmp_path):
    """The lint child's failure is not the answer: the parent lints itself and meets the same error."""
    import porter.convert

    def broken(*args, **kwargs):
        raise RuntimeError("lint broke")

    monkeypatch.setattr(porter.convert, "lint_tpu", broken)
    source = tmp_path / "net.py"
    source.write_text(TPU_LINTED)
    with pytest.raises(RuntimeError, match="lint broke"):
        convert(ConvertOptions(source, tmp_path / "out", input_specs=["8"], reports_aside=True))


@needs_fork
@pytest.mark.parametrize("name", ["resnet", "gpt_mini"])
def test_the_notes_aside_are_the_notes_derived_in_order(name):
    """The reports' notes derived in a forked child (convert._lint_and_notes_started) are derive_notes' own, in its order."""
    from porter.report.adjustments import derive_notes

    conversion = convert(ConvertOptions(FIXTURES / f"{name}.py", GOLDEN / name, reports_aside=True))
    ctx = conversion.translator.ctx
    assert any(ctx.derived_notes.values())
    assert list(ctx.derived_notes.items()) == list(derive_notes(conversion.translator.source, ctx).items())


@needs_fork
def test_notes_that_fail_fail_as_in_order(monkeypatch):
    """The notes child's failure is not the answer: the reports derive the notes themselves and meet the error."""
    import porter.report.adjustments
    import porter.report.model

    def broken(*args, **kwargs):
        raise RuntimeError("notes broke")

    monkeypatch.setattr(porter.report.adjustments, "derive_notes", broken)
    monkeypatch.setattr(porter.report.model, "derive_notes", broken)
    with pytest.raises(RuntimeError, match="notes broke"):
        convert(ConvertOptions(FIXTURES / "lenet.py", GOLDEN / "lenet", reports_aside=True))
