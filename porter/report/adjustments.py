"""Semantic adjustments, derived from the IR and the generated code, said where they happen.

The runtime layers reproduce torch's semantics; this module spells out, per source line, what a reviewer coming
from Keras would otherwise get wrong (BatchNorm momentum convention, explicit padding, gate order, layout
conversions, remapped axis arguments). Every note comes from data: the constructor/call arguments in the source
(bound to the runtime definition's signature, which keeps torch's), the rule that lowered the call, and the text
of the generated statement. Nothing is said about a call porter did not translate.
"""

import ast
import functools
import re
import textwrap
from dataclasses import dataclass

import libcst as cst

from porter.codegen.runtime_bundle import runtime_index

AXIS_PARAMS = ("dim", "dims", "start_dim", "end_dim", "dim0", "dim1", "axis", "axes")
# Source tensor methods whose generated counterpart has another name (same axis meaning).
METHOD_COUNTERPARTS = {"size": ("dim_size", ("input", "dim"))}
KIND_ORDER = ("translator", "numerics", "padding", "weights", "recurrent", "layout", "axis", "training", "porter")


@dataclass(frozen=True)
class Note:
    """One adjustment: where (source line, class or function, method) and what, as Markdown-inline text."""

    line: int
    kind: str
    text: str
    owner: str
    method: str | None = None

    @property
    def sort_key(self):
        return (self.line, KIND_ORDER.index(self.kind) if self.kind in KIND_ORDER else len(KIND_ORDER), self.text)


def derive_notes(source, ctx):
    """{class or function name: [Note]} for the whole file, sorted by line."""
    notes = {}
    unsupported_lines = {u.line for ir in ctx.irs.values() for u in ir.unsupported}
    for name, info in source.classes.items():
        ir = ctx.irs.get(name)
        if ir is None:
            continue
        found = []
        for adjustment in ir.adjustments:  # recorded by the translator itself
            found.append(Note(adjustment.line, "translator", adjustment.text, name))
        for method_name, definition in info.methods.items():
            found.extend(_call_notes(source, ctx, definition, name, method_name, unsupported_lines))
        found.extend(_mapping_notes(source, ctx, ir, name))
        notes[name] = _sorted_unique(found)
    for name, definition in source.functions.items():
        found = _call_notes(source, ctx, definition, name, None, unsupported_lines)
        if found:
            notes[name] = _sorted_unique(found)
    return notes


def _sorted_unique(found):
    unique = {(n.line, n.kind, n.text, n.owner): n for n in found}
    return sorted(unique.values(), key=lambda n: n.sort_key)


# ------------------------------------------------------------------------------------------ rule-based notes


def _call_notes(source, ctx, definition, owner, method, unsupported_lines):
    """Notes for each constructor/functional call in `definition` that a rule lowered."""
    found = []
    used = ctx.used_runtime
    for call in source.nodes_in(definition, cst.Call):
        line = source.line_of(call)
        if line is None or line in unsupported_lines:
            continue
        canonical = source.imports.resolve(call.func)
        if canonical is None:
            continue
        rule = ctx.module_rules.get(canonical) or ctx.function_rules.get(canonical)
        if rule is None or rule.runtime is None or rule.runtime not in used:
            continue
        args = _bind(source, call, rule.runtime)
        if args is None:
            continue
        torch_name = canonical.rsplit(".", 1)[-1]
        for kind, text in _rule_notes(torch_name, rule, args, ctx.renames.get(rule.runtime, rule.runtime)):
            found.append(Note(line, kind, text, owner, method))
    return found


def _rule_notes(torch_name, rule, args, emitted):
    """(kind, text) notes for one lowered call with bound arguments `args` (name -> source text); `emitted` is the
    name the generated code calls the runtime definition by."""
    family = rule.family
    name = torch_name
    notes = []
    if family == "norm":
        notes.extend(_norm_notes(name, emitted, args))
    elif family == "conv":
        notes.extend(_conv_notes(name, args))
    elif family == "pool":
        notes.extend(_pool_notes(name, args))
    elif family == "recurrent":
        notes.extend(_recurrent_notes(name, args))
    elif family == "packed_sequence":
        notes.extend(_packed_sequence_notes(name, args))
    elif family == "attention":
        notes.extend(_attention_notes(name, args))
    elif family == "embedding":
        notes.extend(_embedding_notes(name, args))
    elif family == "dropout":
        notes.append(_pair("training", f"`{name}`: active only when `training` is true (torch's `train()`); "
                                  "its random masks differ from torch's (another RNG)"))
    return notes


def _embedding_notes(name, args):
    notes = []
    if _present(args.get("padding_idx")):
        notes.append(_pair("training", f"`{name}` padding_idx={args['padding_idx']}: the row gets no gradient "
                                  "(tf.stop_gradient) and is zeroed at initialisation only, as in torch"))
    served = name == "EmbeddingBag" or (name == "Embedding" and _literal(args.get("sparse")) is True)
    if served and _literal(args.get("mode")) == "max":
        notes.append(_pair("training", f"`{name}` mode='max': the TPU embedding API combines by sum or mean only; "
                                  "train_tpu.py keeps this table a dense Keras table"))
    elif served:
        notes.append(_pair("training", f"`{name}`{' sparse=True' if name == 'Embedding' else ''}: a dense Keras "
                                  "table here; on a TPU with an embedding accelerator train_tpu.py trains it "
                                  "through the TPU embedding API (RUNBOOK.md says what only a TPU confirms)"))
    return notes


def _norm_notes(name, emitted, args):
    notes = []
    if name.startswith(("BatchNorm", "SyncBatchNorm")) or name == "batch_norm":
        momentum = args.get("momentum", "0.1")
        eps = args.get("eps", "1e-05")
        value = _literal(momentum)
        if momentum == "None":
            text = (f"`{name}` momentum=None: running statistics are a cumulative average of the batch statistics, "
                    "as in torch (Keras' BatchNormalization has no equivalent)")
        elif isinstance(value, (int, float)):
            keras = _number(1 - value)
            text = (f"`{name}` momentum {_number(value)} → Keras momentum {keras} (running = {keras}·running + "
                    f"{_number(value)}·batch): porter's `{emitted}` takes torch's argument unchanged")
        else:
            text = (f"`{name}` momentum `{momentum}` is torch's convention (Keras momentum = 1 − `{momentum}`); "
                    f"porter's `{emitted}` takes it unchanged")
        text += f"; eps {eps} kept (Keras' default is 1e-3); running_var takes the unbiased batch variance, as in torch"
        notes.append(_pair("numerics", text))
    elif name.startswith("LayerNorm") or name == "layer_norm":
        shape = args.get("normalized_shape")
        value = _literal(shape) if shape is not None else None
        count = (f"last {len(value)} dims" if isinstance(value, (tuple, list)) and len(value) != 1
                 else "last dim" if value is not None else f"trailing dim(s) `{shape}` gives")
        eps = args.get("eps", "1e-05")
        notes.append(_pair("numerics", f"`{name}` normalizes the {count} in torch's order as (x − mean)·rsqrt(var + eps) "
                                  f"with the biased variance, eps {eps} (Keras' LayerNormalization defaults to "
                                  "epsilon 1e-3 and computes x·inv − mean·inv, which drifts for inputs with large "
                                  "means)"))
    elif name.startswith("GroupNorm") or name == "group_norm":
        groups = args.get("num_groups", "?")
        notes.append(_pair("numerics", f"`{name}` num_groups={groups}: channels are grouped in torch's channel order "
                                  f"(the channels-last axis), eps {args.get('eps', '1e-05')}"))
    elif name.startswith("InstanceNorm") or name == "instance_norm":
        notes.append(_pair("numerics", f"`{name}`: per-sample, per-channel statistics as torch (affine="
                                  f"{args.get('affine', 'False')}, track_running_stats="
                                  f"{args.get('track_running_stats', 'False')})"))
    return notes


def _conv_notes(name, args):
    notes = []
    transposed = "Transpose" in name or "transpose" in name
    functional = name[:1].islower()
    rank = _rank_of(name)
    padding = args.get("padding", "0")
    stride = args.get("stride", "1")
    kernel = args.get("kernel_size")
    dilation = args.get("dilation", "1")
    padding_value, stride_value = _literal(padding), _literal(stride)
    if transposed:
        if _nonzero(padding_value) or (padding_value is None and padding != "0"):
            notes.append(_pair("padding", f"`{name}` padding={padding}: crops {padding} from each side of the full "
                                     "transposed-convolution output, as torch (Keras' Conv*Transpose has no crop)"))
        output_padding = args.get("output_padding", "0")
        if output_padding != "0":
            notes.append(_pair("padding", f"`{name}` output_padding={output_padding}: adds that many rows/columns at "
                                     "the end of each spatial axis, as torch"))
        if not functional:
            notes.append(_pair("weights", f"`{name}` weight (in, out/groups, k…) is rearranged once by "
                                     "`load_state_dict` into the kernel layout TF's op wants"))
        return notes
    if isinstance(padding_value, str):
        if padding_value == "same":
            notes.append(_pair("padding", f"`{name}` padding='same': total padding dilation·(k − 1) split floor before / "
                                     "ceil after, as torch (stride must be 1)"))
    elif _nonzero(padding_value) or (padding_value is None and padding != "0"):
        pads = _tuple(padding_value, rank)
        strides = _tuple(stride_value, rank)
        kernels = _tuple(_literal(kernel), rank) if kernel is not None else None
        dilations = _tuple(_literal(dilation), rank)
        if strides is not None and all(s == 1 for s in strides) and pads is not None and kernels is not None and \
                dilations is not None and all(2 * p == d * (k - 1) for p, k, d in zip(pads, kernels, dilations)):
            text = (f"`{name}` padding={padding}, stride 1: torch's symmetric padding equals TF's 'SAME' here, "
                    "so no pad op is needed")
        elif strides is not None and any(s > 1 for s in strides):
            stride = stride if stride_value is not None else f"`{stride}`"
            text = (f"`{name}` padding={padding} with stride {stride}: torch pads {padding} on both sides; porter pads "
                    "explicitly (tf.pad) before a 'VALID' convolution, where Keras' 'same' would pad asymmetrically "
                    "(extra padding at the end) and by input-size-dependent amounts")
        else:
            stride = stride if stride_value is not None else f"`{stride}`"
            text = (f"`{name}` padding={padding}, stride {stride}: torch pads {padding} on both sides; porter uses "
                    "TF's 'SAME' only where it pads identically (stride 1, padding = dilation·(k − 1)/2), else an "
                    "explicit tf.pad before a 'VALID' convolution")
        notes.append(_pair("padding", text))
    padding_mode = args.get("padding_mode", "'zeros'")
    if _literal(padding_mode) not in ("zeros", None):
        notes.append(_pair("padding", f"`{name}` padding_mode={padding_mode}: applied as torch does, with tf.pad/concat "
                                 "before the convolution"))
    groups = args.get("groups", "1")
    if groups != "1":
        notes.append(_pair("weights", f"`{name}` groups={groups}: one grouped convolution (depthwise when groups = "
                                 "in_channels), kernels kept per group as torch orders them"))
    if not functional:
        notes.append(_pair("weights", f"`{name}` weight (out, in/groups, k…) is transposed once by `load_state_dict` to "
                                 "(k…, in/groups, out), the layout TF's convolution wants; never per call"))
    return notes


def _pool_notes(name, args):
    notes = []
    lowered = name.lower()
    padding = args.get("padding", "0")
    padding_value = _literal(padding)
    padded = _nonzero(padding_value) or (padding_value is None and padding != "0")
    if "maxpool" in lowered or "max_pool" in lowered:
        if padded:
            notes.append(_pair("padding", f"`{name}` padding={padding}: windows are padded with −inf on both sides, as "
                                     "torch, so a padded cell never wins (Keras' 'same' pads asymmetrically)"))
    elif ("avgpool" in lowered or "avg_pool" in lowered) and "adaptive" not in lowered:
        include = args.get("count_include_pad", "True")
        if padded and include == "True":
            notes.append(_pair("padding", f"`{name}` padding={padding} with count_include_pad=True (torch's default): "
                                     "padded zeros count in the divisor, unlike Keras' 'same' average pooling"))
        elif padded:
            notes.append(_pair("padding", f"`{name}` padding={padding}, count_include_pad={include}: the divisor counts "
                                     "only real elements"))
        if _present(args.get("divisor_override")):
            notes.append(_pair("numerics", f"`{name}` divisor_override={args['divisor_override']}: every window is "
                                      "divided by it, as torch"))
    elif "adaptive" in lowered:
        size = args.get("output_size")
        if size is not None and _literal(size) not in (1, (1, 1), (1, 1, 1), [1, 1]):
            notes.append(_pair("numerics", f"`{name}` output_size={size}: bins computed as torch does (start = "
                                      "floor(i·L/out), end = ceil((i + 1)·L/out)), overlapping when L is not a "
                                      "multiple of the output size"))
    if ("pool" in lowered) and args.get("ceil_mode", "False") not in ("False", None):
        notes.append(_pair("padding", f"`{name}` ceil_mode={args['ceil_mode']}: output size rounded up as torch (a last "
                                 "window must start inside the input or its left padding)"))
    return notes


def _recurrent_notes(name, args):
    notes = []
    if name.startswith("GRU"):
        notes.append(_pair("recurrent", f"`{name}`: gates in torch's order r, z, n (Keras' GRU orders z, r, h); "
                                   "n = tanh(W_in·x + b_in + r ⊙ (W_hn·h + b_hn)), i.e. Keras' reset_after=True with "
                                   "separate input and hidden biases; weights load unchanged"))
    elif name.startswith("LSTM"):
        notes.append(_pair("recurrent", f"`{name}`: gates in torch's order i, f, g, o with two biases (b_ih + b_hh; "
                                   "Keras' LSTM has one); weights load unchanged"))
    elif name.startswith("RNN"):
        notes.append(_pair("recurrent", f"`{name}`: Elman recurrence with two biases (b_ih + b_hh) as torch; weights "
                                   "load unchanged"))
    if not name.endswith("Cell"):
        batch_first = args.get("batch_first", "False")
        if batch_first == "False":
            notes.append(_pair("layout", f"`{name}` batch_first=False (torch's default): tensors stay sequence-first "
                                    "(L, N, H), unlike Keras' batch-major RNNs"))
        dropout = args.get("dropout", "0.0")
        if _literal(dropout) not in (0, 0.0, None):
            notes.append(_pair("training", f"`{name}` dropout={dropout}: applied between stacked layers (not after the "
                                      "last) and only when `training` is true, as torch"))
    return notes


def _packed_sequence_notes(name, args):
    if name in ("pack_padded_sequence", "pack_sequence"):
        return [_pair("recurrent", f"`{name}`: the port keeps the padded tensor and the lengths (nothing is packed "
                                   "or sorted); the RNN layers hold each sequence's state past its length and output "
                                   "zeros there, so outputs and final states match torch's")]
    if name == "pad_packed_sequence" and not _present(args.get("total_length")):
        return [_pair("recurrent", "`pad_packed_sequence` without total_length: torch trims to the longest length; "
                                   "the port does in eager code, but traced (tf.function, XLA) it keeps the padded "
                                   "input's time size, a static shape (past each length: padding_value); pass "
                                   "total_length for one width everywhere")]
    return []


def _attention_notes(name, args):
    notes = []
    if name in ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer"):
        batch_first = args.get("batch_first", "False")
        if batch_first == "False":
            notes.append(_pair("layout", f"`{name}` batch_first=False (torch's default): inputs are (L, N, E), kept "
                                    "as torch"))
    if name == "MultiheadAttention":
        notes.append(_pair("weights", "`MultiheadAttention` keeps torch's packed in_proj_weight (q, k, v stacked), so "
                                 "weights load unchanged; bool masks mean True = masked out, as torch"))
    return notes


# --------------------------------------------------------------------------------------- generated-code notes


def _mapping_notes(source, ctx, ir, owner):
    """Notes read off each translated statement: layout conversions, remapped axes, porter's own comments."""
    found = []
    renames = {new: old for old, new in ctx.renames.items()}
    source_lines = source.lines
    latest = {}
    for mapping in ir.mappings:
        latest[(mapping.source_start, mapping.source_end)] = mapping
    for (start, end), mapping in sorted(latest.items()):
        generated = textwrap.dedent(mapping.generated)
        statement = textwrap.dedent("\n".join(source_lines[start - 1:end]))
        for comment in re.findall(r"#\s*porter:\s*(.+)$", generated, flags=re.MULTILINE):
            found.append(Note(start, "porter", comment.strip(), owner))
        if "self.training" in statement:
            found.append(Note(start, "training", "`self.training` → the `training` argument of `call` (None means "
                                                 "inference, as in Keras)", owner))
        layout, axes = _may_have_layout_notes(generated), _may_have_axis_notes(generated, renames)
        if not (layout or axes):  # most statements: nothing to parse
            continue
        tree = _parse(generated)
        if tree is None:
            continue
        if layout:
            found.extend(Note(start, "layout", text, owner) for text in _layout_notes(tree, renames, generated))
        source_tree = _parse(statement) if axes else None
        if source_tree is not None:
            found.extend(Note(start, "axis", text, owner) for text in _axis_notes(source, source_tree, tree, renames))
    return found


_CALLED_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def _may_have_layout_notes(text):
    return any(name in text for name in LAYOUT_CALLS)  # a renamed call (`torch_io_input`) contains its name


def _may_have_axis_notes(generated, renames):
    """Whether `generated` calls a runtime definition that takes an axis argument: only such a call can have its
    axes rewritten (`_axis_notes`), so the statement and its source need no parse otherwise."""
    return any(_takes_axis(renames.get(name, name)) for name in set(_CALLED_NAME.findall(generated)))


@functools.cache
def _takes_axis(name):
    params = _runtime_params(name)
    return params is not None and any(param in AXIS_PARAMS for param in params)


def _walk(tree):
    """The nodes of `tree` in `ast.walk`'s order (breadth first), as a list: ~3x faster than `ast.walk`, whose
    generators were most of the report's notes time on a large file."""
    nodes, index, node_class = [tree], 0, ast.AST
    while index < len(nodes):
        node = nodes[index]
        index += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_class):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, node_class))
    return nodes


def context_notes(walks, ctx):
    """Layout notes for generated lines no source statement produced (a conversion at the top of `call`).

    Attached straight to their walk rows; the note's line is the row's first source line, else the def line.
    """
    renames = {new: old for old, new in ctx.renames.items()}
    found = []
    for walk in walks:
        for row in walk.rows:
            if row.kind != "context" or not row.generated:
                continue
            text = textwrap.dedent("\n".join(line for _, line in row.generated if not line.rstrip().endswith(":")))
            tree = _parse(text)
            if tree is None:
                continue
            line = row.source_start or walk.source_line
            for note_text in _layout_notes(tree, renames, text):
                note = Note(line, "layout", note_text, walk.class_name, walk.source_name)
                row.notes.append(note)
                found.append((note, row.anchor or walk.anchor))
    return found


LAYOUT_CALLS = frozenset({"to_channels_last", "to_channels_first", "io_input", "io_output", "broadcast_channels_last",
                          "each_image"})


def _layout_notes(tree, renames, text):
    """Notes on the layout conversions `tree` (parsed from `text`) calls."""
    notes = []
    if not _may_have_layout_notes(text):
        return notes
    nodes = _walk(tree)
    calls = [node for node in nodes if isinstance(node, ast.Call) and
             renames.get(_call_name(node), _call_name(node)) in LAYOUT_CALLS]
    parents = {}
    for node in nodes if calls else ():  # only statements with a layout call need their parents
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in calls:
        name = renames.get(_call_name(node), _call_name(node))
        argument = ast.unparse(node.args[0]) if node.args else "…"
        if len(argument) > 40:
            argument = argument[:37] + "…"
        if name == "to_channels_last":
            consumer = _consumer(node, parents, renames)
            notes.append(f"`{argument}` arrives in torch's channels-first order and is converted to "
                         f"channels-last here{f' for `{consumer}`' if consumer else ''} (`to_channels_last`)")
        elif name == "to_channels_first":
            consumer = _consumer(node, parents, renames)
            if consumer == "return":
                notes.append(f"the result `{argument}` goes back to torch's channels-first order "
                             "(`to_channels_first`): the output keeps torch's layout")
            elif consumer in ("flatten", "view", "reshape", "Flatten"):
                notes.append(f"`{consumer}` depends on torch's element order, so `{argument}` goes back to "
                             "channels-first first (`to_channels_first`, one transpose per call); the weights of "
                             "the layer that follows load unpermuted")
            else:
                notes.append(f"`{argument}` goes back to torch's channels-first order here"
                             f"{f' for `{consumer}`' if consumer else ''} (`to_channels_first`)")
        elif name == "io_input":
            notes.append(f"`{argument}` arrives in torch's channels-first order and is converted to channels-last "
                         "once, at the top of the model (`self.io_input`; nothing to convert when the model takes "
                         "channels-last input: `model.channels_last_io = True`)")
        elif name == "io_output":
            notes.append("the result goes back to torch's channels-first order (`self.io_output`; it stays "
                         "channels-last when `model.channels_last_io = True`)")
        elif name == "each_image":  # `each_image(self.io_output, x)`: x an image, or a list of them under a flag
            argument = ast.unparse(node.args[1]) if len(node.args) > 1 else "…"
            notes.append(f"`{argument}` (an image, or the list of images a flag makes it) goes back to torch's "
                         "channels-first order, item by item for a list (`each_image`)")
        elif name == "broadcast_channels_last":
            notes.append(f"`{argument}` is aligned with a channels-last operand before broadcasting "
                         "(`broadcast_channels_last`)")
    return notes


def _consumer(node, parents, renames):
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, (ast.Call, ast.Return, ast.stmt)):
        parent = parents.get(parent)
    if isinstance(parent, ast.Return):
        return "return"
    if isinstance(parent, ast.Call):
        name = _call_name(parent)
        return renames.get(name, name)
    return None


def _axis_notes(source, source_tree, generated_tree, renames):
    """`dim` arguments that differ between a source call and the generated call of the same op."""
    generated_calls = {}
    for node in _walk(generated_tree):
        if isinstance(node, ast.Call):
            name = renames.get(_call_name(node), _call_name(node))
            if name:
                generated_calls.setdefault(name, []).append(node)
    notes = []
    aliases = getattr(source.imports, "aliases", {})
    for node in _walk(source_tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        dotted = _dotted(node.func)
        method = isinstance(node.func, ast.Attribute) and (dotted is None or dotted.split(".")[0] not in aliases)
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        target, source_params = name, None
        if method and name in METHOD_COUNTERPARTS:
            target, source_params = METHOD_COUNTERPARTS[name]
        candidates = generated_calls.get(target)
        if not candidates:
            continue
        generated = candidates.pop(0)
        params = _runtime_params(target)
        if params is None:
            continue
        defaults = _runtime_defaults(target)
        source_args = _bind_ast(node, source_params or params, receiver=node.func.value if method else None,
                                defaults=defaults)
        generated_args = _bind_ast(generated, params, defaults=defaults)
        if source_args is None or generated_args is None:
            continue
        source_axes = [(p, source_args[p]) for p in (source_params or params) if p in AXIS_PARAMS and p in source_args]
        generated_axes = [(p, generated_args[p]) for p in params if p in AXIS_PARAMS and p in generated_args]
        changes = []
        for (source_param, before), (param, after) in zip(source_axes, generated_axes):
            if before != after:
                changes.append(f"{source_param} {before} → {after}" if source_param == param
                               else f"{source_param} {before} → {param} {after}")
        if changes:
            shown = f".{name}" if method else dotted
            notes.append(f"axis arguments rewritten: `{shown}` {', '.join(changes)} (axes of the tensor as porter "
                         "lays it out here: channels-last tensors carry torch's dim 1 last; negative dims may be made "
                         "explicit)")
    return notes


# ------------------------------------------------------------------------------------------------- helpers


@functools.cache
def _runtime_params(name):
    """Parameter names of runtime function/class `name` (a class's __init__, found through its bases)."""
    definition = runtime_index().get(name)
    if definition is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(definition.source))
    except SyntaxError:
        return None
    node = tree.body[-1] if tree.body else None
    if isinstance(node, ast.FunctionDef):
        return _arg_names(node.args)
    if isinstance(node, ast.ClassDef):
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                return _arg_names(item.args)[1:]
        for base in node.bases:
            if isinstance(base, ast.Name):
                found = _runtime_params(base.id)
                if found is not None:
                    return found
    return None


@functools.cache
def _runtime_defaults(name):
    """{parameter: default source text} of runtime function `name` (empty for classes and unknown names)."""
    definition = runtime_index().get(name)
    if definition is None:
        return {}
    try:
        node = ast.parse(textwrap.dedent(definition.source)).body[-1]
    except (SyntaxError, IndexError):
        return {}
    if not isinstance(node, ast.FunctionDef):
        return {}
    arguments = node.args
    positional = [a.arg for a in arguments.posonlyargs + arguments.args]
    found = {name: ast.unparse(value)
             for name, value in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults)}
    found.update({a.arg: ast.unparse(d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    return found


def _arg_names(arguments):
    names = [a.arg for a in arguments.posonlyargs + arguments.args]
    if arguments.vararg is not None:
        names.append("*" + arguments.vararg.arg)
    names.extend(a.arg for a in arguments.kwonlyargs)
    return tuple(names)


def _bind(source, call, runtime_name):
    """Bound arguments (name -> source text) of a cst call, by the runtime definition's torch signature."""
    params = _runtime_params(runtime_name)
    if params is None:
        return None
    bound = {}
    positional = [p for p in params if not p.startswith("*")]
    index = 0
    for arg in call.args:
        text = source.code_of(arg.value).strip()
        if arg.star:
            return bound if bound else {}
        if arg.keyword is not None:
            bound[arg.keyword.value] = text
        elif index < len(positional):
            bound[positional[index]] = text
            index += 1
    return bound


def _bind_ast(call, params, receiver=None, defaults=None):
    """{parameter: argument text} of `call`'s axis arguments (and `defaults`), or None when it unpacks arguments. Only
    axis arguments are unparsed: unparsing every argument of every call was a tenth of converting a large file."""
    bound = dict(defaults or {})
    positional = [p for p in params if not p.startswith("*")]
    args = ([receiver] if receiver is not None else []) + list(call.args)
    for index, arg in enumerate(args):
        if isinstance(arg, ast.Starred):
            return None
        if index < len(positional) and positional[index] in AXIS_PARAMS:
            bound[positional[index]] = ast.unparse(arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        if keyword.arg in AXIS_PARAMS:
            bound[keyword.arg] = ast.unparse(keyword.value)
    return bound


def _parse(text):
    try:
        return ast.parse(text)
    except SyntaxError:
        try:  # a statement that is only valid inside a function or loop (return, break ...)
            return ast.parse("def _():\n" + textwrap.indent(text, "    ") + "\n")
        except SyntaxError:
            return None


def _call_name(node):
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


def _literal(text):
    if text is None:
        return None
    if _INTEGER.fullmatch(text):  # most arguments: as literal_eval reads them, without its parse
        return int(text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _pair(kind, text):
    return kind, text


def _present(text):
    return text is not None and text != "None"


def _nonzero(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    if isinstance(value, (tuple, list)):
        return any(_nonzero(v) for v in value)
    return False


def _tuple(value, rank):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (value,) * rank
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return tuple(value) if len(value) == rank else (tuple(value) * rank if len(value) == 1 else None)
    return None


def _rank_of(name):
    match = re.search(r"([123])d$", name, flags=re.IGNORECASE)
    return int(match.group(1)) if match else 2


def _number(value):
    return f"{value:.6g}"
