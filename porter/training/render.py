"""TrainingPlan -> the text of train_tpu.py, train_support.py and requirements-tpu.txt (through templates/)."""

import ast
import json
import re
import textwrap
from pathlib import Path

import libcst as cst

from porter import __version__
from porter.codegen.emit import environment, format_code_started
from porter.codegen.port_loader import LOADER, loader_source
from porter.training.values import Scope, ValueReader

SUPPORT_SOURCE = Path(__file__).with_name("train_support.py")
GLUON_SUPPORT_SOURCE = Path(__file__).with_name("gluon_support.py")  # Gluon sections, after train_support's
QUIET_SOURCE = Path(__file__).resolve().parents[1] / "quiet_tf.py"  # train_tpu.py carries a copy
SECTION = re.compile(r"^# --- section: ([\w-]+)(?: \(needs: ([\w, -]+)\))?$", re.M)
# flags of train_tpu.py itself; a source flag of the same dest is merged (these four) or dropped (the rest)
MERGED = {"epochs", "batch_size", "seed", "log_interval"}
OWN = MERGED | {"steps", "steps_per_epoch", "strategy", "tpu", "zone", "project", "simulate_replicas", "precision",
                "steps_per_execution", "jit", "data", "init_weights", "output_dir", "checkpoint_dir",
                "checkpoint_every", "log_dir", "export_dir", "no_export", "metrics_json", "help"}
OWN_OPTIONS = {"--" + d.replace("_", "-") for d in OWN} | {"-h", "--help"}
MAIN_NAMES = {"steps_per_epoch": "steps_per_epoch", "epochs": "epochs", "batch_size": "global_batch"}


def render_outputs(plan, source, code_source, manifest):
    """{file name: text} for the training script, its support module and requirements-tpu.txt."""
    context = Context(plan, source, code_source, manifest)
    env = environment()
    formatted = {  # ruff formats the two scripts side by side
        "train_tpu.py": format_code_started(env.get_template("train_tpu.py.j2").render(**context.variables())),
        "train_support.py": format_code_started(env.get_template("train_support.py.j2").render(
            version=__version__, source_name=plan.source_name, body=support_text(context.support_sections()))),
    }
    return {**{name: pending.result() for name, pending in formatted.items()},
            "requirements-tpu.txt": env.get_template("requirements-tpu.txt.j2").render(version=__version__)}


class Context:
    def __init__(self, plan, source, code_source, manifest):
        self.plan = plan
        self.source = source
        self.code = code_source
        self.manifest = manifest
        self.name = plan.source_name
        self.constants = set()
        self.clip_overrides = []  # (constant, default, expression in main) for clipping settings read from flags
        self.notes = [self._note(line, text) for line, text in plan.notes]

    def _note(self, line, text):
        return f"{self.name}:{line}: {text}" if line else text

    # --- the template's variables ----------------------------------------------------------------------
    def variables(self):
        plan = self.plan
        main = self.manifest.get("main_class")
        module = self.manifest["sources"][0]["module"]
        optimizer_refs = self._optimizer_refs()
        optimizer_body = self.optimizer_body()
        loss_code, loss_refs = self.loss_code()
        clip_code = self.clip_code()
        clip_refs = self.plan.clip.refs() if self.plan.clip is not None else set()
        flags = self.source_flags(optimizer_refs | loss_refs | clip_refs)
        build_model = self.build_model(main)
        inputs = self._example_inputs(main)
        return {
            "version": __version__,
            "source_name": self.name,
            "main_class": main,
            "model_module": module,
            "loader": LOADER,
            "loader_code": loader_source(),
            "summary": [_docstring_safe(s) for s in plan.summary] or ["nothing (defaults)"],
            "notes": [_docstring_safe(n) for n in self.notes],
            "constants": self.constant_definitions(),
            "init_args": _py(self.manifest.get("init_args") or {}),
            "example_inputs": _py(inputs),
            "target_kind": plan.loss.target,
            "channels_last_io": bool(self.manifest.get("channels_last_io")),
            "class_axis": plan.loss.class_axis,
            "default_class_loss": self.default_class_loss(),
            "batch_size": _default(plan.batch_size, 32),
            "epochs": _default(plan.epochs, 1),
            "steps": _default(plan.steps, None),
            "seed": _default(plan.seed, 0),
            "log_interval": _default(plan.log_interval, 10),
            "source_examples": _default(plan.source_examples, None),
            "source_steps_per_epoch": _default(plan.steps_per_epoch, None),
            "build_model": build_model,
            "model_line": None,
            "group_function": plan.optimizer.group_function,
            "lambda_function": None,
            "optimizer_signature": self.signature(["model=None"], optimizer_refs),
            "optimizer_doc": _wrapped(_docstring_safe(self.optimizer_doc())),
            "optimizer_body": optimizer_body,
            "optimizer_call": self.call(["model"], optimizer_refs),
            "loss_signature": self.signature([], loss_refs),
            "loss_doc": _wrapped(_docstring_safe(self.loss_doc())),
            "loss_code": loss_code,
            "loss_call": self.call([], loss_refs),
            "clip_code": clip_code,
            "tpu_embedding": self.uses_embeddings(),
            "clip_overrides": self.clip_overrides,
            "clip_doc": _docstring_safe(self.plan.clip.source_text.split("(")[0] + "(...)") if clip_code else "",
            "source_flags": flags,
            "quiet_start_up": quiet_start_up_text(),
        }

    def _example_inputs(self, main):
        for entry in self.manifest["sources"][0]["classes"]:
            if entry["name"] == main:
                return entry.get("example_inputs")
        return None

    # --- signatures: hyperparameters that read flags, epochs or steps per epoch ---------------------------
    def signature(self, first, refs):
        parts = list(first)
        for ref in sorted(refs, key=_ref_order):
            if ref == "steps_per_epoch":
                parts.append("steps_per_epoch=None")
            elif ref == "epochs":
                parts.append("epochs=DEFAULT_EPOCHS")
            elif ref == "batch_size":
                parts.append("batch_size=DEFAULT_BATCH_SIZE")
            else:
                flag = self.plan.flags.get(ref)
                default = flag.default if flag is not None and flag.default is not None else None
                if default is not None:
                    self.constants |= default.constants
                parts.append(f"{ref}={default.code if default is not None else 'None'}")
        return ", ".join(parts)

    def call(self, first, refs):
        parts = list(first)
        for ref in sorted(refs, key=_ref_order):
            parts.append(f"{ref}={MAIN_NAMES.get(ref, 'args.' + ref)}")
        return ", ".join(parts)

    # --- optimizer and schedule -------------------------------------------------------------------------
    def _optimizer_refs(self):
        refs = set(self.plan.optimizer.refs())
        if self.plan.schedule is not None:
            refs |= self.plan.schedule.refs()
            if self.plan.schedule.per_epoch:
                refs.add("steps_per_epoch")
        return refs

    def optimizer_body(self):
        plan = self.plan
        optimizer = plan.optimizer
        self.constants |= optimizer.constants()
        lines = []
        refs = self._optimizer_refs()
        if "steps_per_epoch" in refs:
            lines += ["if steps_per_epoch is None:",
                      "    steps_per_epoch = steps_per_epoch_for(" + ("batch_size" if "batch_size" in refs
                                                                     else "DEFAULT_BATCH_SIZE") + ")"]
        learning_rate = optimizer.lr.code
        schedule = plan.schedule
        if schedule is not None:
            self.constants |= schedule.constants()
            if schedule.cls == "LambdaLR" or any(c.cls == "LambdaLR" for c in schedule.children):
                lines += self.lambda_lines(schedule)
            expression = self.schedule_expression(schedule, optimizer.lr.code, top=True)
            lines.append(f"# {self.name}:{schedule.line}, stepped " + (
                "once per epoch: it advances every steps_per_epoch optimizer steps" if schedule.per_epoch
                else "with every batch"))
            lines.append(f"schedule = {expression}")
            learning_rate = "schedule"
        arguments = [f"learning_rate={learning_rate}"]
        arguments += [f"{s.name}={s.value.code}" for s in optimizer.settings]
        if optimizer.groups:
            groups = ", ".join("{" + ", ".join(f"{k!r}: {v.code}" for k, v in g.items()) + "}"
                               for g in optimizer.groups)
            arguments += [f"param_groups=[{groups}]", "group_of=parameter_group"]
        if optimizer.line:
            lines.append(f"# {self.name}:{optimizer.line}")
        lines.append(f"optimizer = support.{optimizer.cls}({', '.join(arguments)})")
        lines += ["if model is not None:", "    optimizer.bind(named_parameters(model))", "return optimizer"]
        return lines

    def schedule_expression(self, schedule, lr, top=False):
        arguments = [lr]
        if schedule.cls == "SequentialLR":
            children = ", ".join(self.schedule_expression(c, lr) for c in schedule.children)
            arguments.append(f"[{children}]")
        if schedule.cls == "LambdaLR":
            arguments.append("lr_lambda")
        arguments += [f"{s.name}={s.value.code}" for s in schedule.settings]
        if top and schedule.per_epoch:
            arguments.append("steps_per_epoch=steps_per_epoch")
        return f"support.{schedule.cls}({', '.join(arguments)})"

    def lambda_lines(self, schedule):
        lambdas = [schedule] if schedule.cls == "LambdaLR" else [c for c in schedule.children if c.cls == "LambdaLR"]
        value = lambdas[0].lambda_value
        if value is not None:
            self.constants |= value.constants
            return ["def lr_lambda(t):",
                    f'    """lr_lambda of {self.name}:{lambdas[0].line} in TensorFlow ops (t: the scheduler count)."""',
                    f"    return {value.code}"]
        return ["def lr_lambda(t):",
                f'    """lr_lambda of {self.name}:{lambdas[0].line}: porter could not translate it."""',
                f"    raise NotImplementedError(\"write {self.name}:{lambdas[0].line}'s lr_lambda in TensorFlow ops "
                "of t (a float32 scalar tensor)\")"]

    def optimizer_doc(self):
        optimizer = self.plan.optimizer
        text = f"{optimizer.source_text or optimizer.torch_name + '(...)'}"
        text = _one_line(text)
        where = f" ({self.name}:{optimizer.line})" if optimizer.line else \
            " (porter's default: no optimizer in the source)"
        doc = f"{self.plan.framework}: {text}{where}"
        if self.plan.schedule is not None:
            doc += f", with {_one_line(self.plan.schedule.source_text)} ({self.name}:{self.plan.schedule.line})"
        return doc + ".\n\n    Pass the model so that per-parameter-group settings find their parameters."

    # --- loss and clipping ------------------------------------------------------------------------------
    def loss_code(self):
        loss = self.plan.loss
        self.constants |= loss.constants()
        refs = loss.refs()
        arguments = [f"{s.name}={s.value.code}" for s in loss.settings]
        if loss.target == "class" and loss.class_axis != 1:
            arguments.append(f"class_axis={loss.class_axis}")
        return f"support.{loss.cls}({', '.join(arguments)})", refs

    def loss_doc(self):
        loss = self.plan.loss
        if loss.line:
            doc = f"{self.plan.framework}: {_one_line(loss.source_text)} ({self.name}:{loss.line})"
        else:
            doc = f"porter's default: {loss.torch_name}"
        if loss.target == "class" and loss.class_axis != 1 and self.plan.framework == "torch":
            doc += "; the source flattens the predictions, so the classes are on the last axis"
        return doc + ".\n\n    Returns f(y_true, y_pred) -> scalar mean; integer class targets of any rank."

    def clip_code(self):
        clip = self.plan.clip
        if clip is None:
            return None
        arguments = []
        for setting in clip.settings:
            value = setting.value
            if value.refs:  # read from flags: a module constant that main() sets from them
                name = f"CLIP_{setting.name.upper()}"
                code = value.code
                for ref in sorted(value.refs, key=len, reverse=True):  # main() sets these first: only args exists
                    in_main = "args.batch_size" if ref == "batch_size" else MAIN_NAMES.get(ref, "args." + ref)
                    code = re.sub(rf"\b{re.escape(ref)}\b", in_main, code)
                self.clip_overrides.append((name, repr(value.value) if value.known else "None", code))
                arguments.append(f"{setting.name}={name}")
            else:
                self.constants |= value.constants
                arguments.append(f"{setting.name}={value.code}")
        return f"support.{clip.cls}(gradients, {', '.join(arguments)})"

    # --- model ------------------------------------------------------------------------------------------
    def build_model(self, main):
        plan = self.plan
        init_args = self.manifest.get("init_args") or {}
        factory = plan.model_factory
        builder = self.manifest.get("model_factory") or main  # the factory porter builds the main class with
        if init_args or factory is None or (builder != main and factory == main):
            return f"model_lib.{builder}(**INIT_ARGS)"
        if factory != main and factory not in self.source.model_functions():
            self.notes.append(f"the source builds the model with {factory}(), which the model module does not "
                              f"define; train_tpu.py builds {builder}()")
            return f"model_lib.{builder}(**INIT_ARGS)"
        arguments = []
        for keyword, value in plan.model_args:
            if value.refs:
                if not value.known:
                    continue
                code = repr(value.value)
            else:
                self.constants |= value.constants
                code = value.code
            arguments.append(f"{keyword}={code}" if keyword else code)
        return f"model_lib.{factory}({', '.join(arguments)})"

    # --- flags --------------------------------------------------------------------------------------------
    def source_flags(self, used):
        lines = []
        for dest, flag in self.plan.flags.items():
            if dest in OWN or dest in self.plan.flag_symbols:
                if dest in OWN - MERGED:
                    self.notes.append(self._note(flag.line, f"the source's flag {flag.options[0]} is dropped: "
                                                            "train_tpu.py has its own of that name"))
                continue
            options = [o for o in flag.options if o not in OWN_OPTIONS]
            if not options:
                continue
            if flag.default is not None:
                self.constants |= flag.default.constants
            suffix = "" if dest in used else " (from the source; not used by train_tpu.py)"
            lines.append(flag.argument_code(options, suffix))
        return lines

    # --- constants ------------------------------------------------------------------------------------------
    def constant_definitions(self):
        """`NAME = value` for every module constant used, with the constants they use, in source order."""
        index_source = self.code
        values = ValueReader(_index_of(index_source))
        wanted, pending = set(), list(self.constants)
        definitions = {}
        while pending:
            name = pending.pop()
            if name in wanted:
                continue
            wanted.add(name)
            for assignment in values.index.assignments_of(name, None):
                value = values.translate(assignment.value, Scope())
                if value is not None:
                    definitions[name] = (index_source.line_of(assignment.node) or 0, value.code)
                    pending.extend(value.constants - {name})
        return [f"{name} = {code}  # {self.name}:{line}" for name, (line, code) in
                sorted(definitions.items(), key=lambda item: item[1][0])]

    # --- train_support ------------------------------------------------------------------------------------------
    def support_sections(self):
        plan = self.plan
        names = {"optimizer-base", plan.optimizer.cls, "schedule-base", "loss-base", plan.loss.cls, "clipping"}
        if plan.loss.cls == "HuberLoss":
            names.add("SmoothL1Loss")
        if plan.clip is not None:
            names.add(plan.clip.cls)  # a section only where the clip has one of its own (Gluon's clip_global_norm)
        schedule = plan.schedule
        if schedule is not None:
            names.add(schedule.cls)
            names |= {c.cls for c in schedule.children}
        if self.uses_embeddings():
            names.add("tpu-embedding")
        if self.default_class_loss():
            names.add("MSELoss")  # porter's CrossEntropy default, for an output without class scores
        return names

    def default_class_loss(self):
        """Whether the loss is porter's CrossEntropy default (no loss in the source): the script fits it to the
        model's output (an output without class scores trains by MSE)."""
        return self.plan.loss.line is None and self.plan.loss.target == "class"

    def uses_embeddings(self):
        return builds_embeddings(self.source)


def builds_embeddings(source):
    """Whether a model class of `source` builds nn.Embedding / nn.EmbeddingBag or calls F.embedding /
    F.embedding_bag (the TPU embedding API's candidates), from the calls in the class bodies as the import table
    resolves them."""
    wanted = {"torch.nn.Embedding", "torch.nn.EmbeddingBag", "torch.nn.Embedding.from_pretrained",
              "torch.nn.EmbeddingBag.from_pretrained", "torch.nn.functional.embedding",
              "torch.nn.functional.embedding_bag"}
    return any(source.imports.resolve(call.func) in wanted for info in source.classes.values()
               for call in source.nodes_in(info.node, cst.Call))


def _index_of(source):
    from porter.training.index import SourceIndex

    return SourceIndex.build(source)


def quiet_start_up_text():
    """porter/quiet_tf.py below its imports: what train_tpu.py runs around `import tensorflow`."""
    text = QUIET_SOURCE.read_text()
    body = ast.parse(text).body
    first = next(node for node in body[1:] if not isinstance(node, (ast.Import, ast.ImportFrom)))
    start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    return "".join(text.splitlines(keepends=True)[start - 1:]).strip("\n")


def support_text(wanted):
    """The sections of train_support.py that `wanted` names, with what they need, in file order."""
    text = SUPPORT_SOURCE.read_text()
    matches = list(SECTION.finditer(text))
    header = text[:matches[0].start()].rstrip() + "\n"
    sections, needs = {}, {}
    for source_text in (text, GLUON_SUPPORT_SOURCE.read_text()):
        matches = list(SECTION.finditer(source_text))
        for i, match in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(source_text)
            sections[match.group(1)] = source_text[match.end():end].strip("\n")
            needs[match.group(1)] = [n.strip() for n in (match.group(2) or "").split(",") if n.strip()]
    chosen, pending = set(), [w for w in wanted if w in sections]
    while pending:
        name = pending.pop()
        if name not in chosen:
            chosen.add(name)
            pending.extend(needs[name])
    header = header.split('"""', 2)[2].lstrip("\n")  # the template writes its own docstring
    body = "\n\n\n".join(sections[name] for name in sections if name in chosen)
    for module, alias in (("math", "math"), ("numpy", "np")):  # drop imports the chosen sections do not use
        if f"{alias}." not in body:
            header = header.replace(f"import {module} as {alias}\n" if module != alias else f"import {module}\n", "")
    return header + "\n\n" + body + "\n"


def _default(value, fallback):
    if value is None:
        return repr(fallback)
    return repr(value.value) if value.known else repr(fallback)


def _ref_order(ref):
    order = {"steps_per_epoch": 0, "epochs": 1, "batch_size": 2}
    return order.get(ref, 3), ref


def _py(value):
    """Python literal text of JSON-like data (None/True/False, not null/true/false)."""
    return repr(json.loads(json.dumps(value))) if value is not None else "None"


def _one_line(text):
    return " ".join(text.split())


def _docstring_safe(text):
    return text.replace("\\", "\\\\").replace('"""', "'''")


def _wrapped(text, width=112):
    """A docstring wrapped for a function body (paragraphs kept, 4-space continuation indent)."""
    paragraphs = text.split("\n\n    ")
    wrapped = [textwrap.fill(p, width=width, subsequent_indent="    ", break_long_words=False,
                             break_on_hyphens=False) for p in paragraphs]
    return "\n\n    ".join(wrapped)

