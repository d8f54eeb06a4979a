"""What porter read about training, ready for the train_tpu.py template."""

from dataclasses import dataclass, field

from porter.training.values import Value


@dataclass
class Setting:
    """One keyword argument of a train_support constructor: `name=<value.code>`."""

    name: str
    value: Value


@dataclass
class Construct:
    """A torch training object (optimizer, scheduler, loss, clipping) and its train_support counterpart."""

    torch_name: str  # canonical torch name, e.g. torch.optim.AdamW
    cls: str  # train_support class or function
    settings: list = field(default_factory=list)
    line: int | None = None
    source_text: str = ""

    def refs(self):
        refs = set()
        for setting in self.settings:
            refs |= setting.value.refs
        return refs

    def constants(self):
        names = set()
        for setting in self.settings:
            names |= setting.value.constants
        return names

    def setting(self, name):
        return next((s.value for s in self.settings if s.name == name), None)


@dataclass
class OptimizerPlan(Construct):
    lr: Value | None = None
    groups: list = field(default_factory=list)  # [{key: Value}] per-group overrides, in the source's order
    group_function: str | None = None  # `def parameter_group(name, shape)` source

    def refs(self):
        refs = super().refs() | (self.lr.refs if self.lr else set())
        for group in self.groups:
            for value in group.values():
                refs |= value.refs
        return refs

    def constants(self):
        names = super().constants() | (self.lr.constants if self.lr else set())
        for group in self.groups:
            for value in group.values():
                names |= value.constants
        return names


@dataclass
class SchedulePlan(Construct):
    per_epoch: bool = True
    children: list = field(default_factory=list)  # SequentialLR's schedules
    lambda_value: Value | None = None  # LambdaLR: lr_lambda's body in TensorFlow ops of `t`, or None (stub)

    def refs(self):
        refs = super().refs() | (self.lambda_value.refs if self.lambda_value else set())
        for child in self.children:
            refs |= child.refs()
        return refs

    def constants(self):
        names = super().constants() | (self.lambda_value.constants if self.lambda_value else set())
        for child in self.children:
            names |= child.constants()
        return names


@dataclass
class LossPlan(Construct):
    class_axis: int = 1
    target: str = "class"  # class | binary_logits | binary_probs | regression


@dataclass
class TrainingPlan:
    source_name: str
    has_training_code: bool
    optimizer: OptimizerPlan
    loss: LossPlan
    schedule: SchedulePlan | None = None
    clip: Construct | None = None
    flags: dict = field(default_factory=dict)  # dest -> Flag
    flag_symbols: dict = field(default_factory=dict)  # source flag dest -> train_tpu.py flag it merges into
    epochs: Value | None = None
    steps: Value | None = None  # fixed-batch loops: the number of optimizer steps
    batch_size: Value | None = None
    seed: Value | None = None
    log_interval: Value | None = None
    source_examples: Value | None = None  # size of the source's training set, when it can be read
    steps_per_epoch: Value | None = None  # fixed-batch inner loops: optimizer steps per epoch
    model_factory: str | None = None  # callable in the model module that builds the main model
    model_args: list = field(default_factory=list)  # [(keyword or None, Value)]
    notes: list = field(default_factory=list)  # (line or None, text)
    summary: list = field(default_factory=list)  # lines describing what was read
    framework: str = "torch"  # whose training code was read: torch | mxnet (Gluon)

    def note(self, line, text):
        if (line, text) not in self.notes:
            self.notes.append((line, text))
