"""Render the generated model module from translated classes through the Jinja templates, then format it.

Codegen only assembles: every body it places was translated before (by porter.passes) and is read from the
translator's results; it never translates source itself.
"""

import io
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import libcst as cst

from porter import __version__
from porter.codegen.port_loader import LOADER, LOADER_IMPORTS, loader_source
from porter.codegen.runtime_bundle import bundle, runtime_bindings, runtime_file_name, runtime_modules_used
from porter.codegen.signatures import parameter_list
from porter.codegen.templates import environment
from porter.errors import InternalError
from porter.frontend.annotations import portable_code
from porter.frontend.imports import KEPT_STDLIB
from porter.frontend.library_idioms import alias_assignment
from porter.frontend.names import assigned_names, bound_names, mutated_names, registered_names
from porter.frontend.source import body_without_docstring, linked_first
from porter.ir.containers import CONTAINER_RUNTIME, container_runtime
from porter.rules.constants import CARRIED_CLASSES, TENSOR_CLASS_NAMES, TORCH_CONSTANTS, TORCH_HOST_CALLS

INDENT = "    "  # one level, as in the translated body lines

_WORD = re.compile(r"(?<![\w.])(\w+)")  # a name, not an attribute's
LITERALS = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString})


class ModuleEmitter:
    """Assemble the generated module text for one translated source file."""

    def __init__(self, translator, siblings=None, module_path=None):
        self.translator = translator
        self.ctx = translator.ctx
        self.source = translator.source
        self.env = environment()
        self.dropped = []  # (line, what) for top-level code not carried over (training/data/I/O)
        self.model_functions = set(self.source.model_functions())
        self.siblings = siblings or {}  # source file (resolved) -> PortedSibling: modules of the port already made
        self.module_path = module_path  # this module's POSIX path under OUT (a package's modules import siblings)
        self.own_chunks = {}  # (names a top-level statement of the file's own binds) -> its text, `comparable`
        self.imported = {}  # PortedSibling -> [names this module imports from its port]
        self.copied = []  # (name, source file) of linked definitions kept as copies: translated otherwise here
        self.runtime_names = []  # the runtime definitions the module binds (set when it is rendered)
        self.future_annotations = False  # the source (or a file it links) defers its annotations
        self.host_imports = []  # (name bound, import line) of host-side standard modules: kept where the code uses one

    def render(self, module_name):
        """{file name: text}: the model module `module_name` and, beside it, the runtime module it loads."""
        return {name: pending.result() for name, pending in self.render_started(module_name).items()}

    def render_started(self, module_name):
        """`render`'s files as futures of their text: ruff formats both modules while the caller works on."""
        text, runtime_name, runtime = self._unformatted(module_name)
        return {module_name: format_code_started(text), runtime_name: format_code_started(runtime)}

    def _unformatted(self, module_name):
        """(model module text, runtime module's file name, runtime module text), before formatting."""
        kept_imports = []
        first_linked = self.source.linked_from_line
        translated = []  # (names bound, chunk, the sibling port it comes from or None, whether that port holds it)
        for statement in linked_first(self.source.module.body, self.source.positions, first_linked):
            line = self.source.line_of(statement)
            chunk = self.top_level(statement, kept_imports, line)
            if not chunk:
                continue
            names = tuple(bound_names(statement))
            if first_linked is None or line < first_linked:
                self.own_chunks[names] = self.comparable(chunk)
                translated.append((names, chunk, None, False))
            else:
                translated.append((names, chunk, *self.sibling_holding(names, chunk)))
        chunks = self.import_or_copy(translated)
        loader = _free_name(LOADER, set(re.findall(r"\w+", "\n".join(chunks))))
        if self.imported:
            chunks.insert(0, self.sibling_imports(chunks, loader))
        for decided in self.source.decided_ifs:  # the branch taken stands at top level; the test and the other go
            if decided.test == "try":
                text = "try:  (an optional import of a package the port does not have: its ImportError handler is kept)"
            elif decided.test == "shadowed":
                kind = "class" if isinstance(decided.node, cst.ClassDef) else "def"
                text = f"{kind} {decided.node.name.value}:  (bound again below before any use: the later binding is kept)"
            elif decided.test == "with":
                text = "with warnings.catch_warnings():  (warning filters only: what its body defines is kept)"
            else:
                branch = "its body" if decided.taken else "its else branch"
                text = f"if {decided.test}:  (decided statically: {branch} is kept)"
            self.dropped.append((self.source.line_of(decided.node), text))
        self.ctx.use("TorchModule")
        self.ctx.use("load_state_dict")
        model_code = "\n\n\n".join(chunks)
        loader_code = loader_source(loader)
        try:  # the loader is the module's own: it loads the runtime
            bindings = runtime_bindings(f"{loader_code}\n\n\n{model_code}", self.ctx.renames, self.ctx.used_runtime)
        except SyntaxError as error:  # the self-check would say the same of the formatted module: say it here
            raise InternalError(f"generated code does not compile: {error.msg}", module_name, error.lineno) from None
        runtime_name = runtime_file_name(module_name)
        taken = set(re.findall(r"\w+", model_code)) | {emitted for emitted, _ in bindings} | {loader}
        text = self.env.get_template("model_module.py.j2").render(
            source_name=self.source.path.name, version=__version__, runtime_file=runtime_name,
            imports=self.imports(model_code, kept_imports), loader=loader, loader_code=loader_code,
            future_annotations=self.future_annotations,
            runtime=_free_name("runtime", taken), bindings=bindings, chunks=chunks)
        self.runtime_names = [name for _, name in bindings]  # a port of several files shares one runtime module
        definitions = bundle(self.runtime_names)
        runtime = self.env.get_template("runtime_module.py.j2").render(
            model_module=module_name, version=__version__, imports=runtime_modules_used(definitions),
            definitions=definitions)
        return text, runtime_name, runtime

    def sibling_holding(self, names, chunk):
        """(the PortedSibling the linked definition of `names` comes from or None, whether its port holds the
        definition exactly as it is translated here: the same specialisations and layouts). A definition translated
        otherwise here (a block that is its file's top class, taking torch's layout there, and runs channels-last
        inside this model) stays a copy. One linked under a name of its own (another definition has its name here)
        is compared under the names of its own file."""
        origins = {self.source.linked_origins.get(name) for name in names}
        origin = origins.pop() if len(origins) == 1 else None
        sibling = self.siblings.get(origin) if origin is not None else None
        if sibling is None or not names:
            return None, False
        home_names = {local: home for local, home in self.source.linked_home_names.items()
                      if self.source.linked_origins.get(local) == origin}
        if home_names:
            chunk = _WORD.sub(lambda m: home_names.get(m[1], m[1]), chunk)
        return sibling, sibling.chunks.get(tuple(home_names.get(n, n) for n in names)) == self.comparable(chunk)

    def import_or_copy(self, translated):
        """The chunks this module carries, from `translated` [(names, chunk, the sibling port it is linked from or
        None, whether that port holds it as it is)]. A definition its sibling's port holds as it is is imported
        from there (recorded in `imported`) unless it names one this module keeps a copy of
        (`get_same_padding_conv2d()` returns `Conv2dStaticSamePadding`, a copy here: the imported function would
        return its own port's class), decided to a fixed point; the other linked ones are copies (`copied`)."""
        copies = {name for names, _, sibling, same in translated if sibling is not None and not same
                  for name in names}
        # each shared definition's names read, tokenized once for all the rounds below
        shared = {index: _names_read(chunk) - set(names) for index, (names, chunk, sibling, same)
                  in enumerate(translated) if sibling is not None and same}
        changed = True
        while changed:
            changed = False
            for index, read in list(shared.items()):
                names = translated[index][0]
                if copies & read:
                    del shared[index]
                    copies.update(names)
                    changed = True
        chunks = []
        for index, (names, chunk, sibling, _) in enumerate(translated):
            if index in shared:
                self.imported.setdefault(sibling, []).extend(names)
                continue
            if sibling is not None:
                self.copied.extend((name, sibling.source) for name in names)
            chunks.append(chunk)
        return chunks

    def comparable(self, chunk):
        """`chunk` with each runtime name the file had to rename written as the runtime's own (`torch_item` where
        the file uses `item` itself): chunks of two modules compare by what they compute, whatever names their files
        leave free (the imported one runs on its own module's runtime). The names of a linked definition are its
        own file's, so a name it uses makes both files rename alike."""
        runtime_of = {emitted: name for name, emitted in self.ctx.renames.items()}
        if not runtime_of:
            return chunk
        return _WORD.sub(lambda m: runtime_of.get(m[1], m[1]), chunk)

    def sibling_imports(self, chunks, loader):
        """The statements binding what this module imports from its siblings' ports, through the module's by-path
        loader (`loader`: porter/codegen/port_loader.py's, copied in)."""
        taken = set(re.findall(r"\w+", "\n".join(chunks))) | {loader}
        folder = posixpath.dirname(self.module_path or "")
        lines = []
        for sibling, names in sorted(self.imported.items(), key=lambda item: item[0].module):
            variable = _free_name(posixpath.basename(sibling.module)[:-3], taken)
            taken.add(variable)
            relative = posixpath.relpath(sibling.module, folder or ".")
            lines.append(f"{variable} = {loader}(__file__, {relative!r})  # the port of {sibling.source}")
            home_names = self.source.linked_home_names
            lines.extend(f"{name} = {variable}.{home_names.get(name, name)}" for name in names)
        return "\n".join(lines)

    def params_text(self, definition, training=False):
        """The parameter list of a generated def: rebuilt from the source's, defaults naming torch layers or
        functions (`norm_layer=nn.BatchNorm2d`, `partial(nn.LayerNorm, eps=1e-6)`) naming the port's runtime."""
        return parameter_list(self.source, definition, training=training, default_text=self.default_text)

    def default_text(self, node):
        if type(node) not in LITERALS:  # a literal names nothing to rename
            node = node.visit(self.runtime_renamer())
        return " ".join(self.source.module.code_for_node(node).split())

    def runtime_renamer(self):
        """A transformer that replaces references to torch layers and functions a rule covers (`nn.BatchNorm2d`,
        `F.relu`) by the port's runtime names, for code carried over rather than translated (defaults, configs)."""
        return _RuntimeRenamer(self.ctx, self.source.imports)

    def imports(self, text, kept):
        lines = runtime_modules_used(text) + list(LOADER_IMPORTS)
        if "OrderedDict" in text and not any("OrderedDict" in k for k in kept):
            kept.append("from collections import OrderedDict")
        kept = [*kept, *(line for name, line in self.host_imports if re.search(rf"\b{re.escape(name)}\b", text))]
        for line in kept:
            if line not in lines:
                lines.append(line)
        return sorted(_merged_from_imports(set(lines)), key=lambda l: (l.startswith("from"), l))

    # --- top-level statements ----------------------------------------------------------------------------
    def top_level(self, statement, kept_imports, line):
        if isinstance(statement, cst.SimpleStatementLine):
            small = statement.body[0]
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                self.keep_import(small, kept_imports)
                return None
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                          cst.ConcatenatedString)):
                return None  # the module docstring: the generated one replaces it
            if any(name in self.source.imports.aliases for name in assigned_names(statement)) and \
                    alias_assignment(small, self.source.imports) is not None:
                return None  # `concat = torch.cat`: an import alias (frontend/library_idioms.py), as imports are
            if statement in getattr(self.translator, "module_code", {}):  # computed with torch: translated
                return self.translator.module_code[statement]
            if any(name in self.source.model_names for name in [*assigned_names(statement), *mutated_names(statement),
                                                                 *registered_names(statement,
                                                                                   self.source.registrars)]):
                # constants and configs the model classes use (`device = torch.device(...)` becomes None)
                return portable_code(self.source, statement, self.runtime_renamer()).strip("\n")
            self.dropped.append((line, self.first_line(statement)))
            return None
        if isinstance(statement, cst.ClassDef):
            if statement.name.value in self.source.classes:
                info = self.source.classes[statement.name.value]
                for name, method in info.left_out.items():
                    self.dropped.append((self.source.line_of(method),
                                         f"def {info.name}.{name}(...)  (pretrained-weight download or file I/O)"))
                return self.class_text(info)
            if statement.name.value in self.source.model_names:
                # config dataclasses and other plain classes the model uses are carried over, methods that
                # compute with torch translated
                translated = {method: body for (owner, method), body in self.translator.config_method_code.items()
                              if owner == statement.name.value}
                node = statement.visit(_MethodBodies(translated)) if translated else statement
                return portable_code(self.source, node, self.runtime_renamer()).strip("\n")
            self.dropped.append((line, f"class {statement.name.value}  (not used by the model classes)"))
            return None
        if isinstance(statement, cst.FunctionDef):
            if statement.name.value in self.model_functions:
                return self.function_text(statement)
            entry = getattr(self.ctx, "model_entry", None)
            if entry is not None and entry.function == statement.name.value:  # the model's factory, weights aside
                self.dropped.append((line, f"def {entry.function}(...)  (its pretrained weights: the port's "
                                           f"{entry.function}() builds {entry.class_name} as it does)"))
                # torch's names in its arguments (`norm_layer=partial(nn.BatchNorm2d, eps=1e-05)`) made the runtime's
                code = cst.parse_statement(entry.code(self.source.path.name))
                return portable_code(self.source, code, self.runtime_renamer()).strip("\n")
            self.dropped.append((line, f"def {statement.name.value}(...)  (training/data code)"))
            return None
        self.dropped.append((line, self.first_line(statement)))
        return None

    def plain_classes(self):
        """The plain (not module) classes of the file the port carries over: those the model classes use."""
        return {statement.name.value for statement in self.source.module.body if isinstance(statement, cst.ClassDef)
                and statement.name.value not in self.source.classes and statement.name.value in self.source.model_names}

    def first_line(self, statement):
        """The first line of a statement's code: asked only for dropped statements (generating the code of every
        class to read one line was a tenth of rendering a large file)."""
        return self.source.code_of(statement).strip("\n").splitlines()[0]

    def keep_import(self, node, kept):
        if isinstance(node, cst.Import):
            for alias in node.names:
                root = self.source.code_of(alias.name).split(".")[0]
                line = f"import {self.source.code_of(alias).strip().rstrip(',')}"
                if root in KEPT_STDLIB:
                    kept.append(line)
                elif root in sys.stdlib_module_names:  # `datetime` (MONAI's DiNTS prints the time): where used
                    self.host_imports.append((alias.asname.name.value if alias.asname else root, line))
        elif node.module is not None and not node.relative:
            module = self.source.code_of(node.module)
            if module == "__future__" and not isinstance(node.names, cst.ImportStar) and any(
                    self.source.code_of(alias.name) == "annotations" for alias in node.names):
                # annotations the source left unevaluated (MONAI's `mode: UpsampleMode | str` naming a class its
                # linked definitions bind further down) stay so
                self.future_annotations = True
            if module.split(".")[0] in KEPT_STDLIB and module != "__future__":
                names = "*" if isinstance(node.names, cst.ImportStar) else ", ".join(
                    self.source.code_of(alias.name) + (f" as {self.source.code_of(alias.asname.name)}"
                                                       if alias.asname else "") for alias in node.names)
                kept.append(f"from {module} import {names}")  # one line (merged with the module's others)
            elif module.split(".")[0] in sys.stdlib_module_names and module != "__future__" and \
                    not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    name = self.source.code_of(alias.asname.name if alias.asname else alias.name)
                    as_name = f" as {name}" if alias.asname else ""
                    self.host_imports.append((name, f"from {module} import {self.source.code_of(alias.name)}{as_name}"))

    def function_text(self, definition):
        name = definition.name.value
        found = self.translator.function_code.get(name)
        header = self.def_header(definition, name, extra=None)
        if found is None:  # (no model code calls it with tensors: carried over, torch's names renamed)
            return portable_code(self.source, definition, self.runtime_renamer()).strip("\n")
        _, body = found
        decorators = "".join(f"@{d}\n" for d in kept_decorators(self.source, definition))
        text = decorators + header + "\n" + "\n".join(body)
        for variant, variant_body in self.translator.function_variant_code.get(name, {}).values():
            # the same function translated for callers whose tensors are in other layouts (no conversion)
            text += "\n\n\n" + decorators + self.def_header(definition, variant, extra=None) + "\n" + "\n".join(
                variant_body)
        held = getattr(self.translator, "held_variants", {}).get(name)
        if held is not None:  # (a block holding the function runs it through call_module: on a channels-last image
            # the variant, no conversion)
            text += f'\n\n\n{name}.held_variants = {{("channels_last", 4): {held}}}'
        return text

    def def_header(self, definition, name, extra, indent=""):
        params = self.params_text(definition)
        if extra:
            params = f"{params}, {extra}" if params else extra
        returns = ""
        return f"{indent}def {name}({params}){returns}:"

    def class_text(self, info):
        translator = self.translator
        ir = self.ctx.irs[info.name]
        docstring = _docstring(info.node, self.source)
        class_lines = []
        for statement in info.node.body.body:
            if isinstance(statement, cst.SimpleStatementLine) and not (
                    isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value,
                                                                            (cst.SimpleString,
                                                                             cst.ConcatenatedString))):
                code = getattr(self.translator, "class_statement_code", {}).get(statement)
                code = self.source.code_of(statement).strip("\n").strip() if code is None else code
                class_lines.extend(code.splitlines())
        if info.bases:
            bases = ", ".join(info.bases)
        elif info.layer_base:  # the runtime layer: its constructor, weights and state_dict keys are torch's
            bases = self.ctx.use(self.ctx.module_rules[info.layer_base].runtime)
        elif info.container_base:
            bases = self.ctx.use(CONTAINER_RUNTIME[info.container_base])
        else:
            bases = self.ctx.use("TorchModule")
        mixed_in = [name for name in info.mixins if name in self.plain_classes()]
        if mixed_in:  # `class Net(nn.Module, InitMixin)`: the file's plain class, ported beside it
            bases = ", ".join([bases, *mixed_in])
        init = info.methods.get("__init__")
        init_body = translator.class_code.get((info.name, "__init__"), [])
        if init is not None:
            init_signature = self.params_text(init)
            if init.params.star_kwarg is None:
                init_signature = f"{init_signature}, **kwargs" if init_signature.strip() else "self, **kwargs"
        else:
            init_signature = "self, *args, **kwargs"
            init_body = [f"{INDENT * 2}super().__init__(*args, **kwargs)"]
            if info.layer_base:
                init_body.append(f"{INDENT * 2}self.init_args = {{}}  # the layer's own get_config has its arguments")
            elif info.container_base and not info.bases:  # nn.Sequential's own constructor: the modules
                init_body.append(f"{INDENT * 2}self.init_args = {{\"args\": args}}")
            elif not info.bases:
                init_body = [f"{INDENT * 2}super().__init__(**kwargs)", f"{INDENT * 2}self.init_args = {{}}"]
                if self.source.framework == "mxnet":  # Gluon's Block(prefix=None, params=None), which a subclass
                    init_signature = "self, *args, prefix=None, params=None, **kwargs"  # passes on: not Keras's
        call_entry = translator.class_code.get((info.name, "call"))
        if call_entry is not None:
            forward, call_body = call_entry
            call_signature = self.params_text(forward, training=True)
            call_signature = call_signature.replace(", *, training=None", ", training=None")
        elif info.find_method("forward") is None and not info.bases and not info.container_base and \
                not info.layer_base:  # a torch layer subclass without a forward runs the layer's own
            call_signature, call_body = "self, *args, training=None", [
                f"{INDENT * 2}raise NotImplementedError({info.name + ' has no forward in the source'!r})"]
        else:
            call_signature, call_body = None, None
        methods = []
        for name, definition in info.methods.items():
            if name in ("__init__", "forward") or name == "__call__" and _delegates_to_super_call(definition):
                # GluonNLP documents `__call__(self, inputs, begin_state=None)` by overriding it to call the base's:
                # kept, it would hide Keras's `__call__` (and its `training` argument) for nothing
                continue
            key = (info.name, name)
            if key in translator.method_code:
                _, body, takes_training = translator.method_code[key]
                signature = self.params_text(definition)
                if takes_training:
                    signature = _with_training(signature)
            else:  # called by no translated code: `self.training` reads a `training` argument, eval when not given
                body = translator.plain_method_code[key]
                signature = self.params_text(definition)
                if _reads_training(body) and "training" not in {p.name.value for p in definition.params.params}:
                    signature = _with_training(signature)
            decorators = kept_decorators(self.source, definition)
            methods.append({"name": name, "signature": signature, "body": body, "decorators": decorators})
        for (owner, name), (definition, body, takes_training) in translator.method_code.items():
            if owner != info.name or name in info.methods or name in ("__init__", "forward"):
                continue
            # a base class's method this class's forward calls (`self.cell_forward(x_left, x_right)` of a cell
            # base without a forward): translated for this class's layers and layouts, so it overrides here
            signature = self.params_text(definition)
            if takes_training:
                signature = f"{signature}, training=None" if signature.strip() else "training=None"
            methods.append({"name": name, "signature": signature, "body": body,
                            "decorators": kept_decorators(self.source, definition)})
        layout_in = ir.arg_layouts[0] if ir.arg_layouts and (ir.arg_layouts[0] in ("channels_last", "source") or
                                                             ir.arg_layouts[0].startswith("permuted:")) else "source"
        # an in-file base, or a container base deriving layouts from its children, may declare other layouts:
        # then this class always says its own
        inherits = bool(info.bases) or bool(info.container_base) or bool(info.layer_base)
        template = self.env.get_template("class.py.j2")
        text = template.render(name=info.name, bases=bases, docstring=docstring, class_lines=class_lines,
                               # a container, or a torch layer subclass without a forward: the runtime base's
                               # layouts hold (it runs the layer's own call)
                               container=bool(info.container_base or info.layer_base) and call_signature is None,
                               flatten_inputs=json.dumps(dict(sorted(ir.flatten_inputs.items())))
                               if ir.flatten_inputs else "",
                               image_rows=json.dumps(dict(sorted(ir.image_rows.items()))) if ir.image_rows else "",
                               held_reshapes=json.dumps(sorted(ir.held_reshapes)) if ir.held_reshapes else "",
                               # TorchModule's defaults (source in, out as in) go unsaid
                               porter_layout="any" if ir.layout_free and not inherits else
                               layout_in if inherits or layout_in != "source" else None,
                               layout_out=None if ir.layout_free and not inherits else
                               ir.layout_out if inherits or ir.layout_out != layout_in else None,
                               rank_layouts_out="{" + ", ".join(f"{rank}: {json.dumps(layout)}" for rank, layout in sorted(
                                   ir.rank_layouts_out.items())) + "}" if ir.rank_layouts_out else "",
                               renamed=json.dumps(ir.renamed) if ir.renamed else "",
                               channels_last_io=self.ctx.channels_last_io and info.name == self.ctx.main_class,
                               model_container=info.name == self.ctx.main_class and call_signature is None and
                               info.container_base == "sequential" and not self.ctx.channels_last_io and
                               self.ctx.builds_the_model,
                               init_signature=init_signature, init_body=init_body,
                               call_signature=call_signature or "self, *args, training=None",
                               call_body=call_body or [f"{INDENT * 2}return super().call(*args, training=training)"],
                               methods=methods)
        if call_signature is None:
            text = text.replace("    def call(self, *args, training=None):\n"
                                "        return super().call(*args, training=training)\n\n", "")
        for method in methods:
            for decorator in method["decorators"]:
                text = text.replace(f"    def {method['name']}(", f"    @{decorator}\n    def {method['name']}(", 1)
        ir.code = text
        return text.rstrip("\n")


def _names_read(code):
    """The names `code` reads or binds as names: not attributes (`m.Block`), and nothing in strings or comments."""
    names, after_dot = set(), False
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.NAME and not after_dot:
                names.add(token.string)
            after_dot = token.type == tokenize.OP and token.string == "."
    except (tokenize.TokenError, SyntaxError):  # not whole code: every word counts
        return set(_WORD.findall(code))
    return names


class PortedSibling:
    """A module of the port made before this one: its POSIX path under OUT, its source file (relative to the
    package) and the generated text of each of its own top-level definitions (by the names they bind)."""

    def __init__(self, module, source, chunks):
        self.module, self.source, self.chunks = module, source, chunks


def _merged_from_imports(lines):
    """`lines` with the `from M import ...` lines of one module joined into one, its names sorted (a file that pulls
    helpers from several modules, each importing from `typing`, keeps one `from typing import ...`). A name imported
    under another name (`List as List_fast_norm`, the linker's rename) keeps a line of its own: ruff's unused-import
    fix drops every alias of a name from a line where one of them is unused."""
    names, merged = {}, set()
    for line in lines:
        module, _, imported = line[len("from "):].partition(" import ") if line.startswith("from ") else ("", "", "")
        if not imported or imported == "*":
            merged.add(line)
            continue
        for name in (name.strip() for name in imported.split(",")):
            if " as " in name:
                merged.add(f"from {module} import {name}")
            else:
                names.setdefault(module, set()).add(name)
    merged.update(f"from {module} import {', '.join(sorted(found))}" for module, found in names.items())
    return merged


def kept_decorators(source, definition):
    """Decorator texts of `definition` the port keeps: torch's own (`@torch.no_grad()`, `@torch.jit.unused`,
    `@torch.jit.script`, ...) only steer torch's autograd or TorchScript and are dropped."""
    kept = []
    for decorator in definition.decorators:
        node = decorator.decorator
        canonical = source.imports.resolve(node.func if isinstance(node, cst.Call) else node)
        if canonical is not None and (canonical == "torch" or canonical.startswith("torch.")):
            continue
        kept.append(source.code_of(node))
    return kept


def _free_name(name, taken):
    """`name`, or `name_`, `name__` ... when the model code already uses it."""
    while name in taken:
        name += "_"
    return name


def _with_training(signature):
    """`signature` (parameter text) with a `training=None` parameter, before a `**kwargs` if there is one."""
    if not signature.strip():
        return "training=None"
    star_kwarg = STAR_KWARG.search(signature)
    if star_kwarg:
        return f"{signature[:star_kwarg.start(1)]}training=None, {signature[star_kwarg.start(1):]}"
    return f"{signature}, training=None"


def _reads_training(body):
    return any(TRAINING_NAME.search(line.split("#", 1)[0]) for line in body)


STAR_KWARG = re.compile(r"(?:^|,)\s*(\*\*\w+.*)$", re.DOTALL)
TRAINING_NAME = re.compile(r"(?<![\w.'\"])training\b(?!\s*=[^=])")


def _docstring(node, source):
    body = node.body.body
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and \
            isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return source.code_of(body[0].body[0].value)
    return None


def format_code_started(text):
    """A future of `format_code(text)`: ruff formats in a background thread (which only waits on its processes)
    while porter goes on. Run one after another, a conversion's ten ruff processes added ~0.3 s to its wall time."""
    return _Formatting(text)


class _Formatting:
    """`format_code(text)` on a thread of its own; `result()` waits for it (and raises what it raised). A plain
    thread per text, not a concurrent.futures pool: importing that package (and the logging it imports) was ~1% of
    converting a 3,500-line file, for the half-dozen texts a conversion formats."""

    def __init__(self, text):
        import threading

        self._text, self._value, self._error = text, None, None
        self._thread = threading.Thread(target=self._run, name="porter-format", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            self._value = format_code(self._text)
        except BaseException as error:  # noqa: BLE001 - raised by result(), in the caller's thread
            self._error = error

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def format_code(text):
    """Format with ruff (deterministic); unchanged when ruff is not available."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        return text
    fixed = subprocess.run([ruff, "check", "--fix-only", "--unsafe-fixes", "--select", "F401,F841", "--quiet",
                            "--no-cache", "--stdin-filename", "generated.py", "-"], input=text,
                           capture_output=True, text=True, check=False)  # imports and locals torch needed
    if fixed.returncode == 0 and fixed.stdout:
        text = fixed.stdout
    result = subprocess.run([ruff, "format", "--quiet", "--line-length", "120", "--no-cache", "-"], input=text,
                            capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 and result.stdout else text


__all__ = ["ModuleEmitter", "PortedSibling"]


class _MethodBodies(cst.CSTTransformer):
    """A plain class with the bodies of its own methods replaced by translated ones ({method: body lines})."""

    def __init__(self, bodies):
        super().__init__()
        self.bodies, self.depth = bodies, 0

    def visit_FunctionDef(self, node):
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        lines = self.bodies.get(original.name.value) if self.depth == 0 else None
        if lines is None:
            return updated
        parsed = cst.parse_statement("def _translated():\n" + "\n".join(line[4:] for line in lines) + "\n")
        return updated.with_changes(body=parsed.body)


def _delegates_to_super_call(definition):
    """Whether method `definition` (a `__call__`) does nothing but return `super(...).__call__(...)`."""
    statements = body_without_docstring(definition)
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    small = statements[0].body[0]
    value = small.value if isinstance(small, (cst.Return, cst.Expr)) else None
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
        value.func.attr.value == "__call__" and isinstance(value.func.value, cst.Call) and \
        isinstance(value.func.value.func, cst.Name) and value.func.value.func.value == "super"


class _RuntimeRenamer(cst.CSTTransformer):
    """References to torch layers and functions a rule covers made the port's runtime names (`runtime_renamer`). A
    module-level class: one made per call has libcst's `isinstance(visitor, CSTVisitor)` miss its caches and walk
    every visitor class alive (tests/test_transformer_classes.py)."""

    def __init__(self, ctx, imports):
        super().__init__()
        self.ctx, self.imports = ctx, imports

    def leave_Attribute(self, original, updated):
        return self.runtime_name(original) or updated

    def leave_Name(self, original, updated):
        return self.runtime_name(original) or updated

    def leave_Call(self, original, updated):
        if isinstance(original.func, cst.Name) and original.func.value in ("isinstance", "issubclass") and \
                len(original.args) == 2:  # `isinstance(vals, (np.ndarray, torch.Tensor))`: the port's tensors
            return updated.with_changes(args=[updated.args[0], updated.args[1].with_changes(
                value=self.tensor_classes(original.args[1].value, updated.args[1].value))])
        host = TORCH_HOST_CALLS.get(self.imports.resolve(original.func))
        return cst.parse_expression(host) if host is not None else updated  # `torch.device("cuda")`

    def tensor_classes(self, original, updated):
        """The class operand of an isinstance check with torch's tensor classes made the port's."""
        if self.imports.resolve(original) in TENSOR_CLASS_NAMES:
            return cst.Name(self.ctx.use("TensorClasses"))
        if isinstance(original, cst.Tuple) and isinstance(updated, cst.Tuple):
            return updated.with_changes(elements=[
                new.with_changes(value=cst.Name(self.ctx.use("TensorClasses")))
                if self.imports.resolve(old.value) in TENSOR_CLASS_NAMES else new
                for old, new in zip(original.elements, updated.elements)])
        return updated

    def runtime_name(self, node):
        canonical = self.imports.resolve(node)
        if canonical in TORCH_CONSTANTS:  # `dtype=torch.float32`
            return cst.parse_expression(TORCH_CONSTANTS[canonical])
        if canonical == "torch.Tensor":  # the class as a value (a TypeVar's constraint)
            return cst.parse_expression("tf.Tensor")
        rule = self.ctx.module_rules.get(canonical) or self.ctx.function_rules.get(canonical)
        runtime = getattr(rule, "runtime", None) if canonical else None
        if runtime is None and canonical is not None:  # `make=nn.Sequential`, `base=Module`
            runtime = container_runtime(canonical) or ("TorchModule" if canonical == "torch.nn.Module" else
                                                       CARRIED_CLASSES.get(canonical))
        return cst.Name(self.ctx.use(runtime)) if runtime else None
