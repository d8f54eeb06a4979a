"""Statement translation for one function body, keeping Python control flow and comments.

Layouts meet at control-flow joins: when two paths leave a tensor in different layouts, both are brought back
to torch's order at the end of each path (unless no later code reads it: `live_after`); a loop body that changes
a variable's layout converts it back at the end of the body. A branch on a tensor value (data-dependent) becomes
`tf.where` when both paths only assign.
"""

import contextlib

import libcst as cst

from porter.frontend.annotations import annotation_text
from porter.frontend.gluon import BLOCK_BASES
from porter.frontend.imports import dotted_name
from porter.frontend.names import (
    bound_before_read,
    dict_never_changed,
    empty_table_depth,
    keyed_depth,
    names_bound_in,
    names_in,
)
from porter.frontend.source import MODULE_BASES
from porter.frontend.static_branches import flag_truth
from porter.frontend.walk import descendants, has_escape
from porter.ir.layout import element_template, kernel_layout, layout_of_order, merge_layouts, settle, to_layout, unify
from porter.ir.lists import (
    GrowingList,
    GrowingTable,
    HeldTable,
    decide,
    features_in_torch_layout,
    growing,
    growing_table,
    held_beside_untyped,
    held_features,
    holds_images,
    image_or_images,
    images_held,
    relaid_in_loop,
    resolved,
    returned_table,
)
from porter.ir.module_ir import LineMapping
from porter.ir.values import (
    EinsumRecipe,
    Value,
    features_dim,
    is_permuted,
    iterable_code,
    may_be_images,
    permuted_layout,
    physical_order,
    python,
    result_of,
    tensor,
)
from porter.ir.varying import assigned_into
from porter.passes.correlated_branches import later_branch_of_same_test
from porter.passes.expressions import ExpressionTranslator
from porter.passes.frame_inputs import frame_sources, frames_order
from porter.passes.in_place_activations import (
    aliases_after,
    in_place_call,
    in_place_loop_head,
    read_in_same_statement,
    replaced,
)
from porter.passes.isinstance_narrowing import isinstance_narrowing
from porter.passes.last_turn import last_turn_guard
from porter.passes.optional_values import holds_none, optional_image, optional_tuple
from porter.passes.order_wanted import order_wanted_next
from porter.passes.stored_places import kept_name, place_of, still_held
from porter.passes.view_chains import VIEWS, held_order, image_order, permutation, view_chain_at
from porter.rules.tensor_ops import layout_kept_result

INDENT = "    "


class Returned(Exception):
    pass


class NestedFunction:
    """A function defined inside a translated body: where it goes (a placeholder line), and once translated its
    header, body lines and what a call gives (a tensor template, or None)."""

    def __init__(self, statement, depth, marker, env=None):
        self.statement, self.depth, self.marker = statement, depth, marker
        self.header, self.lines, self.template, self.ranks = None, None, None, ()
        self.held = {}  # position -> the stored order (torch dims) a tensor parameter is taken in, when not torch's
        self.images = set()  # positions of the images it takes channels-last (its first call handed them so)
        self.env = env or {}  # the enclosing variables where it is defined (an uncalled one is translated with them)


def _untyped_container(base):
    """Whether `base` (the Value an item assignment stores into) is a container porter does not follow the items
    of (a dict, a list it could not type): neither a tensor nor a list of images held in their own layout."""
    return base.kind == "python" and growing(base) is None and images_held(base) is None


def _empty_list(node):
    """`[]` or `list()` (ssd.pytorch's `sources = list()`)."""
    return isinstance(node, cst.List) and not node.elements or isinstance(node, cst.Call) and \
        isinstance(node.func, cst.Name) and node.func.value == "list" and not node.args


def _images_list(item):
    """A list of channels-last images an item of a returned tuple is (a detection head's `return outs, boxes`, each
    filled per level): as it is held, its template telling callers the items' layout; else None."""
    held = resolved(item) if item.kind != "tuple" else item
    template = element_template(held) if held.kind == "tuple" and held.items is None else None
    return held if template is not None and holds_images(template) else None


def _names_of(target, count):
    """Whether `target` is a tuple or list of `count` plain names (`outs, boxes`)."""
    return isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == count and all(
        isinstance(e.value, cst.Name) for e in target.elements)


def _empty_list_or_default(node):
    """`[] if x is None else x` (either order): an empty list literal or a value handed in."""
    if not isinstance(node, cst.IfExp):
        return False
    sides = (node.body, node.orelse)
    return any(isinstance(side, cst.List) and not side.elements for side in sides) and \
        any(isinstance(side, cst.Name) for side in sides)


class BodyTranslator(ExpressionTranslator):
    """Translate the statements of one method (mode "init" or "forward") into lines of Keras code."""

    def __init__(self, ctx, info, mode, env, output_layout=None):
        super().__init__(ctx, info, mode, env)
        self.output_layout = output_layout  # "source" for the main class: the boundary converts back
        self.return_template = None
        self.returns_pending_permute = False  # a method whose one return is its last statement (method_signature)
        self.handed_heads = None  # the one pending permute of attention heads the call's tensors were handed in
        self.returns_disagree = False  # one return gave a tuple, another a tensor (the class translator retries)
        self.dead_branches = 0  # inside a branch a static test never takes (its returns set no return template)
        self.nested_returns = None  # inside a function defined in the body: the values its returns give
        self.nested_functions = {}  # name -> NestedFunction defined in the blocks being translated
        self.module_env = {}
        self.pending = []  # statements to emit before the current one (hoisted layout conversions)
        self.following = ()  # the statements after the one being translated, in its block
        self.hoisted = {}  # (variable, layout) -> name holding the converted tensor
        self.rebound = set()  # variables the block being translated assigns (their hoisted conversions are stale)
        self.calls_itself = None  # a class calling itself on images: the image template (ClassBodyTranslator)
        self.parameter_names = set(env)  # (the body's parameters: env holds them at the start)
        self.closing_guard = None  # (the `if` ending the loop body being translated, whether it runs on every turn
        # but the last: last_turn.py), or None
        self.last_turn_paths = {}  # id(such an `if`) -> (names it binds, the env its last-turn path leaves, test)
        self.root_body = None  # the body `block` was first called for
        self.outer_followings = []  # the `following` of each enclosing block's statement, outermost first
        self.loop_depth = 0  # loops the statement being translated is inside
        self.mentions = {}  # id(statement) -> (statement, the names it mentions) (live_after)
        self.function_mentions = None  # the names the body's nested functions and lambdas mention, once read
        self.places = {}  # `x[i]` -> the value the body stored there, kept under its own name (stored_places.py)
        self.places_stored = set()  # the places the statement being translated stored into
        self.epilogue = []  # lines following the statement being translated (in-place activations' rebinding)
        self.aliases = ()  # groups of names a plain `a = b` left holding one tensor (in_place_activations.py)
        self.appended_channels_last = set()  # lists of images in torch's layout a channels-last image was appended to
        # id(an `if`) -> {variable: (its value on the first path, on the other)}: the paths of an earlier `if` of the
        # same test left it so, the join holding the first (correlated_branches.py)
        self.path_values = {}

    def hoist(self, name, code, layout):
        """Convert variable `name` once into a new variable and reuse it until `name` is reassigned."""
        key = (name, layout)
        if key not in self.hoisted:
            target = f"{name}_{'nhwc' if layout == 'channels_last' else 'nchw'}"
            while target in self.env:
                target += "_"
            self.pending.append(f"{target} = {code}")
            self.hoisted[key] = target
            self.env[target] = python(target)
        return self.hoisted[key]

    # --- blocks ------------------------------------------------------------------------------------------
    def block(self, body, depth):
        """Lines for an IndentedBlock/SimpleStatementSuite at indentation `depth`; returns (lines, terminated)."""
        self.outer_followings.append(self.following)
        try:
            return self._block(body, depth)
        finally:
            self.outer_followings.pop()

    def _block(self, body, depth):
        lines, terminated = [], False
        if self.root_body is None:
            self.root_body = body  # the body of the method or function translated (keyed_depth reads it)
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        if isinstance(body, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=body.body)]
        hoisted_before, rebound_before, self.rebound = dict(self.hoisted), self.rebound, set()
        places_before, self.places = self.places, dict(self.places)
        outer_following, aliases_before = self.following, self.aliases
        skipped = 0
        for index, statement in enumerate(statements):
            if terminated:
                break
            if skipped:  # (a statement of a view chain translated whole)
                skipped -= 1
                continue
            self.following = statements[index + 1:]  # (what an if/else's einsums are written for: order_wanted)
            lines.extend(self.comments(statement, depth))
            outer_pending, self.pending = self.pending, []
            # conversions hoist into this body only: a class or function translated on the way (its first call)
            # hoists into its own, and this one's hoister is back when it is done
            outer_hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), self if self.mode == "forward" \
                else None
            try:
                chained = self.view_chain(statements, index, depth) if self.mode in ("forward", "function") else None
                if chained is not None:
                    (produced, skipped), terminated = chained, False
                else:
                    produced, terminated = self.statement(statement, depth)
            finally:
                self.ctx.hoister = outer_hoister
            lines.extend(INDENT * depth + line for line in self.pending)
            self.pending = outer_pending
            assigned = _assigned_name(statement)
            if assigned is not None and not terminated:
                _einsum_in_order_wanted(self.env, produced, assigned, depth, self.following)
            lines.extend(produced)
            if self.places:
                self.places = still_held(self.places, self.code(statement),
                                         names_bound_in(statement, loop_targets=True),
                                         self.places_stored)
            self.places_stored = set()
            self.aliases = aliases_after(self.aliases, statement)
        self.following, self.aliases = outer_following, aliases_before
        self.places = places_before  # (what this block stored is not known after it: the statement holding it
        # expires the outer block's places it may have changed)
        # `if self.conv3: X = self.conv3(X)`: a conversion of X hoisted before the block is stale after it
        self.hoisted = {key: name for key, name in hoisted_before.items() if key[0] not in self.rebound}
        self.rebound = rebound_before | self.rebound
        if self.nested_functions:
            self._fill_local_functions(lines)
        if isinstance(body, cst.IndentedBlock):
            for empty_line in body.footer:
                if empty_line.comment is not None:
                    lines.append(INDENT * depth + empty_line.comment.value)
        if not lines or all(line.strip().startswith("#") for line in lines):
            lines.append(INDENT * depth + "pass")
        return lines, terminated

    def view_chain(self, statements, index, depth):
        """(lines, statements after the first it covers) for a chain of views and permutes of an image held
        channels-last that starts at `statements[index]`, translated as one regrouping (passes/view_chains.py), or
        None."""
        chain = view_chain_at(statements, index)
        source = self.env.get(chain.source) if chain is not None else None
        if source is None or not source.is_tensor or source.rank is None or not (
                source.channels_last or source.layout == "source"):
            return None
        steps, rank, sizes = [], source.rank, None
        for method, call in chain.steps:
            values = [self.expr(arg.value) for arg in call.args]
            if method in VIEWS:
                if len(values) == 1 and isinstance(call.args[0].value, (cst.Tuple, cst.List)):
                    values = [self.expr(e.value) for e in call.args[0].value.elements]
                if not values or any(v.kind not in ("python", "size") or v.kind == "size" for v in values):
                    return None
                sizes, rank = values, len(values)
                steps.append(f'("view", ({", ".join(v.code for v in values)},))')
            else:
                perm = permutation(method, values, rank)
                if perm is None:
                    return None
                steps.append(f'("permute", {tuple(perm)})')
        if source.channels_last:  # (tokens out of an image: the result in torch's order)
            out_order = held_order(sizes) or list(range(len(sizes)))
        else:  # (from torch's order: taken only when it ends in an image, held channels-last)
            out_order = image_order(sizes)
            if out_order is None:
                return None
        code = f"{self.ctx.use('view_chain')}({source.code}, {physical_order(source)}, [{', '.join(steps)}], " \
               f"{out_order})"
        held = tensor(code, len(out_order)) if out_order == sorted(out_order) else layout_kept_result(code, out_order)
        self.bind_target(cst.Name(chain.target), held)
        lines = [INDENT * depth + line for statement in chain.statements[1:] for line in
                 [c.strip() for c in self.comments(statement, 0) if c.strip()]]
        lines.append(f"{INDENT * depth}# porter: the {len(chain.steps)} views and permutes of `{chain.source}` run "
                     + ("as one regrouping of the image as it lies" if source.channels_last else
                        "as one regrouping into an image held channels-last"))
        lines.append(f"{INDENT * depth}{chain.target} = {code}")
        return lines, chain.count - 1

    def comments(self, statement, depth):
        lines = []
        for empty_line in getattr(statement, "leading_lines", ()):
            if empty_line.comment is not None:
                lines.append(INDENT * depth + empty_line.comment.value)
            elif lines or depth == 0:
                lines.append("")
        return lines

    def statement(self, statement, depth):
        start = self.source.line_of(statement) or self.line
        self.line = self.ctx.line = start  # ctx.line: where op nodes are recorded (ir/op_nodes.py)
        handler = getattr(self, f"_stmt_{type(statement).__name__}", None)
        if handler is None:
            text = self.code(statement).strip("\n")
            return [INDENT * depth + line for line in _dedent(text).splitlines()], False
        lines, terminated = handler(statement, depth)
        self.record(statement, start, lines)
        return lines, terminated

    def record(self, statement, start, lines):
        if self.ctx.ir is None or self.mode not in ("forward", "init"):
            return
        position = self.source.positions.get(statement)
        end = position.end.line if position else start
        if isinstance(statement, cst.SimpleStatementLine):
            text = self.code(statement).strip("\n")
            self.ctx.ir.mappings.append(LineMapping(start, end, _dedent(text), _dedent("\n".join(lines))))

    # --- simple statements -------------------------------------------------------------------------------
    def _stmt_SimpleStatementLine(self, statement, depth):
        lines, terminated = [], False
        for small in statement.body:
            produced, terminated = self.small(small, depth)
            lines.extend(produced)
        comment = statement.trailing_whitespace.comment
        if comment is not None and lines:
            lines[-1] = f"{lines[-1]}  {comment.value}"
        lines, self.epilogue = lines + self.epilogue, []  # (after the statement's own comment)
        return lines, terminated

    def small(self, small, depth):
        pad = INDENT * depth
        if self.mode in ("forward", "function"):
            split = self.in_place_read_split(small, depth)
            if split is not None:
                return split
        if isinstance(small, cst.Assign):
            return self.assign(small, pad), False
        if isinstance(small, cst.AnnAssign):
            annotation = annotation_text(self.source, small.annotation.annotation)
            if small.value is None:  # a bare declaration: kept only when its annotation exists in the port
                return ([f"{pad}{self.code(small.target)}: {annotation}"] if annotation else []), False
            value = self.expr(small.value)
            self.bind_target(small.target, value)
            typed = f": {annotation}" if annotation else ""
            return [f"{pad}{self.code(small.target)}{typed} = {value.code}"], False
        if isinstance(small, cst.AugAssign):
            return self.aug_assign(small, pad), False
        if isinstance(small, cst.Expr):
            return self.expression_statement(small, pad), False
        if isinstance(small, cst.Return):
            return self.return_statement(small, pad), True
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return [], False
        if isinstance(small, cst.Assert):
            test = self.expr(small.test)
            if test.is_tensor:
                written = " ".join(self.code(small.test).replace("\\\n", " ").split())  # (one comment line)
                return [f"{pad}# porter: assert on tensor values dropped (not compilable): {written}"], \
                    False
            message = f", {self.expr(small.msg).code}" if small.msg is not None else ""
            return [f"{pad}assert {test.code}{message}"], False
        if isinstance(small, cst.Raise):
            return [pad + self.code(small)], True
        if isinstance(small, (cst.Pass, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Del)):
            return [pad + self.code(small)], isinstance(small, (cst.Break, cst.Continue))
        return [pad + self.code(small)], False

    def assign(self, small, pad):
        lines = self._assign(small, pad)
        if self.mode in ("forward", "function") and len(small.targets) == 1 and \
                isinstance(small.targets[0].target, cst.Name):
            self.epilogue += self.in_place_alias(small.value, pad, small.targets[0].target.value)
        return lines

    def in_place_read_split(self, small, depth):
        """A statement that reads a name after an in-place activation in it overwrote the name in torch (`return
        self.rep(x) + x` of a Sequential leading with `nn.ReLU(inplace=True)`): the call first, into a name of its
        own, the name rebound as `in_place_alias` rebinds it, then the statement reading both; a read an operation
        consumed before the call ran (`self.skip(x) + self.rep(x)`) reads the name as it was. None where the
        statement holds no such read."""
        found = read_in_same_statement(self.source, self.info, small, self.aliases)
        if found is None:
            return None
        call, _, before = found
        pad, taken = INDENT * depth, set(self.env) | names_in(self.root_body or small)
        func = call.func
        result = _fresh(f"{func.attr.value if isinstance(func, cst.Attribute) else 'activated'}_out", taken)
        lines, swaps = [], [(call, cst.Name(result))]
        if before:
            kept = _fresh(f"{call.args[0].value.value}_in", taken | {result})
            lines += self._assign(cst.Assign([cst.AssignTarget(cst.Name(kept))], cst.Name(before[0].value)), pad)
            swaps += [(read, cst.Name(kept)) for read in before]
        rest = replaced(small, swaps)
        outer, self.following = self.following, (cst.SimpleStatementLine([rest]), *self.following)
        try:  # (the rebound name is read by the rest of this statement)
            lines += self._assign(cst.Assign([cst.AssignTarget(cst.Name(result))], call), pad)
            lines += self.in_place_alias(call, pad, result)
        finally:
            self.following = outer
        produced, terminated = self.small(rest, depth)
        return lines + produced, terminated

    def in_place_alias(self, value, pad, target=None):
        """The lines rebinding each name an in-place activation in `value` overwrote in torch, where the name is read
        again (passes/in_place_activations.py): `out = self.relu(x)` -> `x = out`; `self.conv(self.relu(x))` -> `x =
        self.relu(x)`; `y = self.rep(x)` of a Sequential starting with one -> `x = self.rep[0](x)`; a bare
        `F.relu(x, inplace=True)` -> `x = ...`. Each is computed on the name as it was (the port's tensors are
        immutable). None otherwise."""
        lines = []
        for call in descendants(value):
            how = in_place_call(self.source, self.info, call) if isinstance(call, cst.Call) else None
            if how is not None:
                lines += self.rebind_overwritten(call, how, value, pad, target)
        return lines

    def rebind_overwritten(self, call, how, value, pad, target):
        """The lines of `in_place_alias` for one call (`how`: in_place_call's answer)."""
        lines = []
        name = call.args[0].value.value
        holders = sorted(set().union({name}, *(group for group in self.aliases if name in group)),
                         key=lambda held: (held != name, held))  # (`residual = x` before: torch overwrites both)
        holders = [held for held in holders if held != target and self.live_after(held)]
        if not holders:
            return lines
        note = f"{pad}# porter: torch's in-place activation overwrites `{'`, `'.join(holders)}` as well: the " \
               f"port rebinds {'it' if len(holders) == 1 else 'them'}"
        lines.append(note)
        if how == "maybe first layer":  # (the activation is elementwise: the tensor keeps its layout)
            held = self.env.get(name)
            first = f"{self.ctx.use('in_place_head')}({self.expr(call.func).code}, {name})"
            result, holders = holders[0], holders[1:]
            self.bind_target(cst.Name(result), held.with_code(result) if isinstance(held, Value) else
                             python(result))
            lines.append(f"{pad}{result} = {first}")
        elif call is value and how == "result" and target is not None:
            result = target
        else:
            again = call if how == "result" else cst.Call(cst.Subscript(call.func, [cst.SubscriptElement(
                cst.Index(cst.Integer("0")))]), [cst.Arg(cst.Name(name))])  # (the Sequential's first layer)
            result, holders = holders[0], holders[1:]
            lines += self._assign(cst.Assign([cst.AssignTarget(cst.Name(result))], again), pad)
        for held in holders:
            known = self.env.get(result)
            self.bind_target(cst.Name(held), known if isinstance(known, Value) else python(result))
            lines.append(f"{pad}{held} = {result}")
        return lines

    def _assign(self, small, pad):
        targets = [t.target for t in small.targets]
        updated = self.data_update(targets[0], small.value, pad) if len(targets) == 1 else None
        if updated is not None:
            return updated
        stubbed = next((c for c in map(self.third_party_target, targets) if c is not None), None)
        if stubbed is not None:  # `plt.rcParams["figure.figsize"] = size`: a library the port does not import
            message = self.stub_message(stubbed, "third-party code porter does not translate; port it by hand")
            return [f"{pad}{self.ctx.use('not_supported')}({message!r})"]
        keyed = self.table_keys(targets[0]) if len(targets) == 1 and self.mode != "init" else None
        if keyed is not None:
            # `dense_x[key] = block(...)`, `grid[i][j] = x` in a table used only by key: its first value decides
            # the layout they are all stored in (channels-last images, or torch's layout)
            cells, code = keyed
            value = self.expr(small.value)
            template = decide(cells, value)
            if template is not None:
                value = to_layout(self.ctx, value if value.is_tensor else tensor(value.code), "channels_last",
                                  template.rank)
            elif value.is_tensor:
                value = to_layout(self.ctx, value, "source")
            return [f"{pad}{code} = {value.code}"]
        if len(targets) == 1 and isinstance(targets[0], cst.Subscript):
            base = self.expr(targets[0].value)
            if base.is_tensor or (base.kind == "python" and (_masked(targets[0]) or self.tensor_attribute_target(
                    targets[0].value))):
                # a value porter could not type, indexed by a comparison (`logits[logits < v] = -inf`): a tensor
                return self.item_assignment(targets[0], base.but(kind="tensor"), small, pad)
            held = element_template(resolved(base)) if base.kind == "tuple" else None
            if held is not None and held.is_tensor and held.layout in ("channels_last", "source") and (
                    held.rank is None or held.rank > 2) and self.mode != "init" and len(targets[0].slice) == 1 and \
                    isinstance(targets[0].slice[0].slice, cst.Index):
                # `features[i] = t` in a list of channels-last images, `x[i] = branch(x[i])` in a list of images in
                # torch's layout (HRNet's branches): stored in the list's layout
                raw = self.expr(small.value)
                value = to_layout(self.ctx, raw if raw.is_tensor else tensor(raw.code), held.layout, held.rank)
                code, target, lines = self.code(targets[0]).replace(" ", ""), self.target_code(targets[0]), []
                self.places.pop(code, None)
                self.places_stored.add(code)
                if raw.is_tensor and place_of(code) is not None and value.code == raw.code:
                    self.places[code] = value.with_code(target)  # (read back with the rank and sizes it has)
                elif raw.is_tensor and place_of(code) is not None:
                    # read back as it lies (`x[i].sigmoid()` after storing a permuted view: YOLOv5's Detect)
                    name = kept_name(place_of(code), self.env)
                    lines.append(f"{pad}{name} = {raw.code}")
                    self.env[name] = self.places[code] = raw.with_code(name)
                    value = to_layout(self.ctx, raw.with_code(name), held.layout, held.rank)
                return lines + [f"{pad}{target} = {value.code}"]
        if self.mode == "init":
            return self.init_assign(small, targets, pad)
        self.storing_list = isinstance(small.value, cst.List)
        try:
            value = self.expr(small.value)
        finally:
            self.storing_list = False
        if isinstance(value.static, HeldTable) and len(targets) == 1 and isinstance(targets[0], cst.Name):
            return self.bind_features(targets[0], value, pad)
        if len(targets) == 1 and isinstance(targets[0], cst.Subscript) and value.is_tensor and \
                value.layout != "source" and _untyped_container(self.expr(targets[0].value)):
            # `outputs[name] = x` in a dict (or a container porter cannot type): its readers take what they read
            # from it in torch's layout
            value = to_layout(self.ctx, value, "source")
        if _list_display(small.value) and value.kind == "tuple":
            template = element_template(value)  # mutable: appends follow, converted to the elements' layout
            value = value.but(items=None, static=("each", template) if template is not None else None)
        elif len(targets) == 1 and isinstance(targets[0], cst.Name) and self.mode in ("forward", "function") and \
                self.root_body is not None and empty_table_depth(small.value) is not None and \
                keyed_depth(self.root_body, targets[0].value) is not None:
            # `dense_x = {}`, `grid = [[None] * n for _ in range(m)]` used only by key: the first value stored
            # decides the layout of them all (the body is read only for an empty table's name)
            value = python(value.code, static=GrowingTable(empty_table_depth(small.value)))
        elif _empty_list(small.value) and self.mode in ("forward", "function") and \
                all(isinstance(t, cst.Name) for t in targets):
            value = value.but(static=GrowingList())  # `x_list = []`: the first item put in decides its layout
            if self.calls_itself is not None and all(t.value in self.parameter_names for t in targets):
                value.static.template = self.calls_itself  # `if children is None: children = []` (as below)
        elif isinstance(small.value, (cst.Tuple, cst.List)) and small.value.elements and all(
                _empty_list(e.value) for e in small.value.elements) and \
                self.mode in ("forward", "function") and all(_names_of(t, len(small.value.elements))
                                                             for t in targets):
            # `outs, boxes = [], []` (a detection head's per-level lists): each as `x_list = []`
            value = Value(value.code, "tuple", items=tuple(
                python("[]", static=GrowingList()) for _ in small.value.elements))
        elif self.calls_itself is not None and value.kind == "python" and \
                _empty_list_or_default(small.value) and self.mode == "forward" and \
                all(isinstance(t, cst.Name) for t in targets):
            # `children = [] if children is None else children` in a class calling itself on images: a list its
            # own calls hand down, taken to hold images like the one the call takes (the recursion then settles
            # the parameter to it: recursion.py)
            cells = GrowingList()
            cells.template = self.calls_itself
            value = Value(value.code, "tuple", items=None, static=cells)
        if value.kind == "size":
            value = self.materialize_size(value) if not all(
                isinstance(t, (cst.Tuple, cst.List)) for t in targets) else value
            if all(isinstance(t, (cst.Tuple, cst.List)) for t in targets):
                return self.size_unpack(targets, value, pad)
        if value.is_tensor and value.rank is not None and all(isinstance(t, (cst.Tuple, cst.List)) and not any(
                isinstance(e, cst.StarredElement) for e in t.elements) for t in targets) and \
                len({len(t.elements) for t in targets}) == 1:
            value = self.tensor_unpack(value, len(targets[0].elements))
        for target in targets:
            self.bind_target(target, value)
        left = " = ".join(self.target_code(t) for t in targets)
        return [f"{pad}{left} = {value.code}"]

    def bind_features(self, target, value, pad):
        """`features = self.backbone(x)`, a dict of channels-last images a block returned: kept as it lies where
        the body never changes it (read by key as it lies, handed on to calls translated for it, every other read
        giving its values in torch's layout), else bound with every value in torch's layout."""
        name = target.value
        self.bind_target(target, python(name))
        if self.root_body is None or not dict_never_changed(self.root_body, name):
            return [f"{pad}{name} = {value.code}"]
        self.env[name] = held_features(self.ctx, value.static.item, name)
        return [f"{pad}{name} = {value.static.raw}"]

    def tensor_attribute_target(self, target):
        """Whether `target` is `self.name` holding a plain tensor (`self.P = torch.zeros(...)` in __init__, then
        `self.P[:, :, 0::2] = torch.sin(X)`: a scatter, as TensorFlow tensors are immutable)."""
        return isinstance(target, cst.Attribute) and dotted_name(target.value) == "self" and \
            self.ctx.ir is not None and self.ctx.ir.attributes.get(target.attr.value) == "tensor"

    def third_party_target(self, target):
        """The canonical id of the third-party name an assignment target stores into (`plt.rcParams[...]`), or
        None."""
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            canonical = self.source.imports.resolve(target) if isinstance(target, cst.Attribute) else None
            if canonical is not None:
                return canonical if self.is_third_party(canonical) else None
            target = target.value
        return None

    def tensor_unpack(self, value, count):
        """`q, k, v = qkv` (a tensor of known rank): torch iterates the tensor's first dim; the port unstacks the
        axis that holds it, so each part keeps the layout (a pending permute stays pending) and the unpacking traces
        under tf.function."""
        if value.layout == "flat_channels_last":
            value = to_layout(self.ctx, value, "source")
        order = physical_order(value)
        item_order = [d - 1 for d in order if d != 0]
        item = tensor("", value.rank - 1).but(layout=layout_of_order(item_order) if item_order else "source",
                                              dtype=value.dtype)
        axis = order.index(0)
        return Value(f"tf.unstack({value.code}, num={count}, axis={axis})", "tuple", items=(item,) * count)

    def item_assignment(self, target, base, small, pad):
        """`x[idx] = v` -> x = setitem(x, np.s_[idx], v): a static scatter (TensorFlow tensors are immutable)."""
        held = self.same_mask_assignment(target, base, small.value, pad)
        if held is not None:
            return held
        value = self.expr(small.value)
        held = self.item_assignment_in_layout(target, base, value, pad)
        if held is None:
            held = self.masked_assignment(target, base, value, pad)
        if held is not None:
            return held
        value = self.as_plain(value)
        source = self.as_plain(base)
        index = self.slice_code(target, plain=True)
        helper = self.ctx.use("setitem")
        name = self.code(target.value)
        self.bind_target(target.value, assigned_into(source, name))
        return [f"{pad}{self.target_code(target.value)} = {helper}({source.code}, np.s_[{index}], {value.code})"]

    def item_assignment_in_layout(self, target, base, value, pad):
        """`out[:, :-1, :fold] = x[:, 1:, :fold]` on a channels-last or permuted tensor (TSM's temporal shift of
        a 5-d view of images): the index goes to the axes that hold its dims and the value comes in the layout
        that part is stored in, so the tensor keeps its layout; None for an index that is not basic (then the
        scatter runs in torch's order)."""
        if base.rank is None or not all(isinstance(e.slice, (cst.Slice, cst.Index)) for e in target.slice):
            return None
        items = [e.slice for e in target.slice]
        index_values = [self.expr(i.value) for i in items if isinstance(i, cst.Index)]
        if any(v.is_tensor for v in index_values):
            return None
        found = self.physical_index(base, items, index_values)
        if found is None or not found[0]:
            return None
        physical, part_order = found
        if value.is_tensor:
            if value.rank != len(part_order):
                return None
            if physical_order(value) != part_order:
                value = to_layout(self.ctx, value, "source")
                if part_order != list(range(len(part_order))):
                    value = tensor(settle(value, part_order, self.ctx), value.rank).but(
                        layout=layout_of_order(part_order), dtype=value.dtype)
        elif value.kind != "python":
            return None
        helper = self.ctx.use("setitem")
        name = self.code(target.value)
        self.bind_target(target.value, assigned_into(base, name))
        index = ", ".join(code for code, _ in physical)
        return [f"{pad}{self.target_code(target.value)} = {helper}({base.code}, np.s_[{index}], {value.code})"]

    def masked_assignment(self, target, base, value, pad, operator=None):
        """`x[x < 0] = 0` (`x[x > 0] += 1` with `operator`): a mask of the tensor's own rank and a number, a `where`
        on the tensor as it is held (the mask brought to its layout; traced by XLA, where a scatter by a mask is
        not); None for anything else."""
        items = [e.slice for e in target.slice]
        if len(items) != 1 or not isinstance(items[0], cst.Index) or not base.is_tensor or base.rank is None or \
                value.kind != "python" or not isinstance(value.static, (int, float)) or isinstance(value.static, bool):
            return None
        mask = self.expr(items[0].value)
        if not (mask.is_tensor and mask.dtype == "bool" and mask.rank == base.rank):
            return None
        (held_mask, held_base), _, _ = unify(self.ctx, [mask, base])
        name = self.code(target.value)
        self.bind_target(target.value, assigned_into(held_base, name))
        number = f"tf.cast({value.code}, {held_base.code}.dtype)"
        new = number if operator is None else f"{self.wrap(held_base.code)} {operator} {number}"
        return [f"{pad}{self.target_code(target.value)} = tf.where({held_mask.code}, {new}, {held_base.code})"]

    def same_mask_assignment(self, target, base, value_node, pad):
        """`distance[mask] = dist[mask]` (farthest-point sampling): one boolean mask on both sides of tensors of one
        shape, a `where` (traced by XLA; the masked values' count depends on the data); None for anything else."""
        items = [e.slice for e in target.slice]
        if not (isinstance(value_node, cst.Subscript) and len(items) == 1 and isinstance(items[0], cst.Index) and
                len(value_node.slice) == 1 and isinstance(value_node.slice[0].slice, cst.Index) and
                self.code(items[0].value) == self.code(value_node.slice[0].slice.value)) or not base.is_tensor:
            return None
        mask, other = self.expr(items[0].value), self.expr(value_node.value)
        if not (mask.is_tensor and mask.dtype == "bool" and other.is_tensor and mask.rank == base.rank == other.rank):
            return None
        (held_mask, held_other, held_base), _, _ = unify(self.ctx, [mask, other, base])
        name = self.code(target.value)
        self.bind_target(target.value, assigned_into(held_base, name))
        where = f"tf.where({held_mask.code}, {held_other.code}, {held_base.code})"
        return [f"{pad}{self.target_code(target.value)} = {where}"]

    def item_aug_assignment(self, small, base, pad):
        """`x[idx] += v` -> x = setitem(x, np.s_[idx], x[idx] + v), on x in torch's layout (a pending transpose is
        applied first, so the index means what it means in torch)."""
        target = small.target
        binary = self.code(small.operator).strip()[:-1]
        if binary in ("+", "-", "*", "/"):
            masked = self.masked_assignment(target, base, self.expr(small.value), pad, binary)
            if masked is not None:
                return masked
        name = self.code(target.value)
        source = self.as_plain(base)
        lines = [] if source.code == name else [f"{pad}{name} = {source.code}"]
        self.bind_target(target.value, assigned_into(source, name))  # (the index reads it in torch's order now)
        index = self.slice_code(target, plain=True)
        value = self.as_plain(self.expr(small.value))
        binary = self.code(small.operator).strip()[:-1]
        helper = self.ctx.use("setitem")
        lines.append(f"{pad}{name} = {helper}({name}, np.s_[{index}], {name}[{index}] {binary} {self.wrap(value.code)})")
        return lines

    def stub_message(self, construct, reason):
        return self.ctx.unsupported(self.line, construct, reason)

    def size_unpack(self, targets, value, pad):
        """`b, c, h, w = x.shape`: each name gets torch's dim, read from the right axis of the Keras tensor; a
        tensor whose rank porter did not know has as many dims as the names unpacked (a block's unknown result)."""
        lines = []
        counts = {len(t.elements) for t in targets if not any(isinstance(e, cst.StarredElement) for e in t.elements)}
        held = self.env.get(value.code)
        if value.rank is None and len(counts) == 1 and isinstance(held, Value) and held.is_tensor and held.rank is None:
            rank = counts.pop()
            value = value.but(rank=rank)
            self.env[value.code] = held.but(rank=rank)
        channels = features_dim(value)
        if not value.layout.startswith("permuted:"):
            helper = self.ctx.use("torch_size")
            for target in targets:
                for dim, element in enumerate(target.elements):
                    if isinstance(element.value, cst.Name):
                        self.env[element.value.value] = python(element.value.value).but(
                            channel_count=dim == channels, spatial_size=_spatial(dim, value.rank))
            left = " = ".join(self.code(t) for t in targets)
            return [f"{pad}{left} = {helper}({value.code}{self.layout_flag(value)})"]
        for target in targets:
            names = [e.value for e in target.elements]
            codes = []
            for dim, name_node in enumerate(names):
                if isinstance(name_node, cst.Name):
                    self.env[name_node.value] = python(name_node.value).but(
                        channel_count=dim == channels, spatial_size=_spatial(dim, value.rank))
                codes.append(self.dim_size(value, dim).code)
            left = ", ".join(self.code(n) for n in names)
            lines.append(f"{pad}{left} = {', '.join(codes)}")
        return lines

    def target_code(self, target):
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            return f"self.{self.keras_attr(target.attr.value)}"
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
            # `p.requires_grad = False` on a parameter (`for p in layer.parameters()`): a Keras variable's flag (on
            # a module it is a plain attribute in torch too)
            receiver = self.expr(target.value)
            if receiver.kind != "module":
                return f"{receiver.code}.trainable"
        if isinstance(target, (cst.Tuple, cst.List)) and any(
                isinstance(e.value, cst.Attribute) for e in target.elements):  # `self.head, self.output = ...`
            items = [("*" if isinstance(e, cst.StarredElement) else "") + self.target_code(e.value)
                     for e in target.elements]
            code = ", ".join(items) + ("," if len(items) == 1 else "")
            return f"[{code}]" if isinstance(target, cst.List) else f"({code})" if target.lpar else code
        return self.code(target)

    def data_update(self, target, value_node, pad, operator=None):
        """`sub.weight.data /= scale`, `p.data = t` (a weight's storage replaced in place, in a reset function):
        the variable is assigned in place (`assign_in_place`; a plain tensor attribute is rebound), where
        Keras's variables have no `.data` to write. None for any other target."""
        if not (isinstance(target, cst.Attribute) and target.attr.value == "data" and
                isinstance(target.value, cst.Attribute) and dotted_name(target.value) is not None):
            return None
        holder = self.expr(target.value)
        owner, _, name = holder.code.rpartition(".")
        if holder.kind == "module" or not owner or not name.isidentifier() or "(" in owner:
            return None
        value = self.as_plain(self.expr(value_node))
        if operator is not None:
            value = python(f"{self.wrap(holder.code)} {operator} {self.wrap(value.code)}")
        torch_layout = ", torch_layout=True" if operator is None else ""
        return [f"{pad}{self.ctx.use('assign_in_place')}({owner}, {name!r}, {value.code}{torch_layout})"]

    def aug_assign(self, small, pad):
        updated = self.data_update(small.target, small.value, pad, self.code(small.operator).strip()[:-1])
        if updated is not None:
            return updated
        if isinstance(small.target, cst.Subscript):
            base = self.expr(small.target.value)
            if base.is_tensor:
                return self.item_aug_assignment(small, base, pad)
        operator = self.code(small.operator).strip()
        value = self.expr(small.value)
        cells = growing(self.env.get(small.target.value)) if isinstance(small.target, cst.Name) else None
        if cells is not None and not cells.decided and operator == "+=" and isinstance(small.value, cst.List) and \
                value.kind == "tuple" and value.items:
            decide(cells, value.items[0])  # `xs += [t]` as the first item: as an append
        target_value = self.expr(small.target)
        if operator == "+=" and (target_value.kind == "tuple" or growing(target_value) is not None) and \
                value.kind in ("tuple", "python"):  # `xs += [t]`: the items go in as the list holds its items
            held = images_held(target_value)
            value = self.list_in_layout(value, Value("", "tuple", items=(held,))) if held is not None else \
                self.as_plain(value)
            return [f"{pad}{self.target_code(small.target)} {operator} {value.code}"]
        if target_value.is_tensor or value.is_tensor:
            (left, right), layout, rank = unify(self.ctx, [target_value, value])
            binary = operator[:-1]
            if left.code != target_value.code:
                result = tensor(f"{self.wrap(left.code)} {binary} {self.wrap(right.code)}", rank, layout)
                self.bind_target(small.target, result)
                return [f"{pad}{self.code(small.target)} = {result.code}"]
            self.bind_target(small.target, tensor("", rank, layout))
            return [f"{pad}{self.code(small.target)} {operator} {right.code}"]
        return [f"{pad}{self.target_code(small.target)} {operator} {value.code}"]

    def expression_statement(self, small, pad):
        node = small.value
        if self.mode in ("forward", "function") and in_place_call(self.source, self.info, node) == "result":
            aliased = self.in_place_alias(node, pad)  # (a bare `F.relu(x, inplace=True)`: x rebound to it)
            if aliased:
                return aliased
        appended = self.append_to_typed_list(node, pad)
        if appended is not None:
            return appended
        filled = self.indexed_fill(node, pad)
        if filled is not None:
            return filled
        updated = self.attribute_update(node, pad)
        if updated is not None:
            return updated
        updated = self.variable_update(node, pad)
        if updated is not None:
            return updated
        chain = _in_place_chain(node)
        held = self.env.get(chain[0].value) if chain is not None else None
        if chain is not None and isinstance(held, Value) and (held.is_tensor or held.kind == "python" and (
                held.static is None and self.ctx.function_rules.get(f"Tensor.{chain[-1].func.attr.value[:-1]}"))):
            # (a name porter could not type, `v` of `(v, lv), (k, lk) = map(lambda t: ..., ...)`, called with a
            # tensor's in-place method: a tensor; its result was dropped)
            # in-place tensor ops (`g.mul_(2).add_(y)`: one after the other, each reading what the last left): the
            # name rebound to each result in turn
            name, lines = chain[0], []
            for call in chain[1:]:
                value = self.expr(call.with_changes(func=call.func.with_changes(value=name)))
                self.bind_target(name, value)
                lines.append(f"{pad}{name.value} = {value.code}")
            return lines
        if isinstance(node, cst.SimpleString):
            return [pad + self.code(node)]
        value = self.expr(node)
        if self.mode == "init" and isinstance(node, cst.Call):
            self.note_init_call(node)
        if value.code == "None" and isinstance(node, cst.Call):  # a call with no effect on the model (a rule says)
            return [f"{pad}# porter: {self.code(node.func)}(...) dropped: no effect on the model"]
        return [pad + value.code]

    def attribute_update(self, node, pad):
        """`module.weight.data.mul_(scale)`, `self.gamma.add_(1)`: in-place arithmetic on an attribute (a weight
        inside an init function) assigns the functional result back in place, so the variable load_state_dict and
        the optimizer hold changes (the initialisers `normal_`/`zero_`/... have rules of their own). None otherwise."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return None
        method = node.func.attr.value
        rules = self.ctx.function_rules
        if not method.endswith("_") or method.startswith("_") or f"Tensor.{method}" in rules or \
                f"Tensor.{method[:-1]}" not in rules:
            return None
        receiver = node.func.value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value
        if not (isinstance(receiver, cst.Attribute) and dotted_name(receiver) is not None):
            return None
        target = self.expr(receiver)
        owner, _, name = target.code.rpartition(".")
        if target.kind == "module" or not owner or not name.isidentifier() or "(" in owner:
            return None
        value = self.expr(node.with_changes(func=cst.Attribute(receiver, cst.Name(method[:-1]))))
        if not value.is_tensor:  # no rule translated it (an attribute of unknown kind): left as written
            return None
        value = self.as_plain(value)
        return [f"{pad}{self.ctx.use('assign_in_place')}({owner}, {name!r}, {value.code})"]

    def variable_update(self, node, pad):
        """`param.data.normal_().mul_(0.1)`, `param.data.mul_(0.1)`: in-place initialisers and arithmetic on the
        `.data` of a name (a loop over `self.named_parameters()`): each in turn fills the variable the name holds in
        place (`fill_variable`; the initialisers' rule does so for theirs). None otherwise."""
        chain = _in_place_chain(node, through_data=True)
        if chain is None or not isinstance(chain[0], cst.Attribute):
            return None
        data, name, rules, lines = chain[0], chain[0].value, self.ctx.function_rules, []
        for call in chain[1:]:
            method = call.func.attr.value
            if f"Tensor.{method}" in rules:  # an initialiser (`normal_`, `fill_`): its rule fills the variable
                value = self.expr(call.with_changes(func=call.func.with_changes(value=data)))
                lines.append(f"{pad}{value.code}")
            elif f"Tensor.{method[:-1]}" in rules:  # in-place arithmetic: the functional result, filled in
                value = self.as_plain(self.expr(call.with_changes(func=cst.Attribute(name, cst.Name(method[:-1])))))
                lines.append(f"{pad}{self.ctx.use('fill_variable')}({name.value}, {value.code})")
            else:
                return None
        return lines

    def indexed_fill(self, node, pad):
        """`x[idx].zero_()`, `.fill_(v)`, `.copy_(src)` (also through `.data`): an item assignment. On a local
        tensor `x = setitem(x, np.s_[idx], v)`; on an attribute (`self.qkv.bias[n:2 * n].data.zero_()`) the
        variable is filled in place."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and
                node.func.attr.value in ("zero_", "fill_", "copy_")):
            return None
        receiver = node.func.value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value
        if not isinstance(receiver, cst.Subscript):
            return None
        method = node.func.attr.value
        arguments = [a.value for a in node.args if a.keyword is None] + [a.value for a in node.args if a.keyword]
        if method == "zero_":
            value_node = cst.Float("0.0")
        elif len(arguments) == 1:
            value_node = arguments[0]
        else:
            return None
        base = receiver.value
        if isinstance(base, cst.Attribute) and base.attr.value == "data":  # `weight.data[0].zero_()`
            base = base.value
        if isinstance(base, cst.Name) and isinstance(self.env.get(base.value), Value) and \
                self.env[base.value].is_tensor:
            assignment = cst.Assign(targets=[cst.AssignTarget(receiver.with_changes(value=base))], value=value_node)
            return self.assign(assignment, pad)
        if isinstance(base, cst.Attribute) and (dotted_name(base) or "").startswith("self."):
            owner, name = self.code(base.value), base.attr.value
            value = self.as_plain(self.expr(value_node))
            helper = self.ctx.use("fill_slice_in_place")
            return [f"{pad}{helper}({owner}, {name!r}, np.s_[{self.slice_code(receiver)}], {value.code})"]
        return None

    def append_to_typed_list(self, node, pad):
        """`features.append(t)` on a list whose tensors share a layout: `t` is converted to that layout."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and
                node.func.attr.value == "append" and isinstance(node.func.value, cst.Name) and len(node.args) == 1):
            return None
        holder = self.env.get(node.func.value.value)
        cells = growing(holder)
        if cells is not None:  # a list the body started empty: the first item decides the layout of all
            item = self.expr(node.args[0].value)
            if decide(cells, item) is None:
                return [f"{pad}{node.func.value.value}.append({self.as_plain(item).code})"]
            return [f"{pad}{node.func.value.value}.append({self.item_for_list(cells, item).code})"]
        if not (isinstance(holder, Value) and holder.kind == "tuple" and isinstance(holder.static, tuple) and
                holder.static[:1] == ("each",)):
            return None
        template = holder.static[1]
        item = self.expr(node.args[0].value)
        if not item.is_tensor:
            item = tensor(item.code)  # an untyped call result: torch's layout
        if template.channels_last:
            item = to_layout(self.ctx, item, "channels_last", template.rank)
        else:
            if item.channels_last and template.is_tensor and None not in (item.rank, template.rank) and \
                    item.rank == template.rank > 2:
                self.appended_channels_last.add(node.func.value.value)  # (a loop may hold the list so: _loop_entries)
            item = to_layout(self.ctx, item, "source")
            if item.rank != template.rank:
                self.env[node.func.value.value] = holder.but(static=("each", template.but(rank=None)))
        return [f"{pad}{node.func.value.value}.append({item.code})"]

    def item_for_list(self, cells, item):
        """`item` converted to the layout of the channels-last images growing list `cells` holds (an item of
        another rank leaves the template's rank unknown)."""
        template = cells.template
        if not item.is_tensor:
            item = tensor(item.code)  # an untyped call result: torch's layout
        item = to_layout(self.ctx, item, "channels_last", template.rank)
        if None not in (item.rank, template.rank) and item.rank != template.rank:
            cells.template = template.but(rank=None)
        return item

    def note_init_call(self, node):
        """Hook for the class translator (register_buffer etc.)."""

    def in_branch(self, dead, translate, *args):
        """`translate(*args)` for one branch of an if; `dead`: a static test never takes it (`if x.dim() == 4:` in
        a call translated for 3-d x), so what it returns does not decide the class's output layout."""
        self.dead_branches += bool(dead)
        try:
            return translate(*args)
        finally:
            self.dead_branches -= bool(dead)

    def return_statement(self, small, pad):
        if small.value is None:
            return [pad + "return"]
        value = self.expr(small.value)
        value = self.shape_return(value)
        if self.nested_returns is not None:
            self.nested_returns.append(value)
        if is_permuted(value):
            order = value.layout.split(":", 1)[1]
            return [f"{pad}# porter: returned before its permute ({order}): the callers fold it into what they do next",
                    f"{pad}return {value.code}"]
        return [f"{pad}return {value.code}"]

    def shape_return(self, value):
        """Bring a returned value to the class's output convention (torch's layout at the model boundary)."""
        if value.kind == "size":
            value = self.materialize_size(value)
        item = returned_table(value)
        if item is not None:
            return self.returned_features(value, item)
        if isinstance(value.static, HeldTable):  # a dict of channels-last images built in one go
            return self.returned_features(python(value.static.raw), value.static.item)
        if self.return_template is not None and isinstance(self.return_template.static, HeldTable) and \
                not self.dead_branches:
            self.returns_disagree = True  # (another return beside a dict of channels-last features: the class is
            # made again, returning everything in torch's layout)
        if self.handed_heads is not None and self.returns_pending_permute and self.return_template is None and \
                not self.dead_branches:
            value = self.tuple_in_layouts(value, [_einsum_as_handed(i, self.handed_heads) for i in value.items]) \
                if value.kind == "tuple" and value.items else _einsum_as_handed(value, self.handed_heads)
        if value.is_tensor and value.layout.startswith("permuted:"):
            if self.returns_pending_permute and self.return_template is None and not self.dead_branches and (
                    _heads_of_tokens(value) or _conv_kernel(value)):
                # (attention heads split off a batch of tokens; a mask, a bias or a matrix is returned as torch
                # makes it: its callers add it to what they hold)
                self.return_template = value  # a method's one return: its callers take the permute pending
                return value
            template = self.return_template
            if self.returns_pending_permute and template is not None and template.is_tensor and \
                    template.layout == value.layout:
                return value  # (another return held as the first one, pending too)
        held = value.is_tensor and value.layout.startswith("permuted:") and self.returns_held_orders() and (
            self.return_template is None or self.return_template.layout.startswith("permuted:"))
        if value.is_tensor and value.layout.startswith("permuted:") and not held:
            value = to_layout(self.ctx, value, "source")
        if value.kind == "tuple" and value.items:
            kept = self.returns_pending_permute and self.return_template is None and not self.dead_branches
            items = tuple(to_layout(self.ctx, i, "source") if i.is_tensor and i.layout.startswith("permuted:") and
                          not (kept and _heads_of_tokens(i)) else i for i in value.items)
            if [i.code for i in items] != [i.code for i in value.items]:  # `return x.transpose(1, 3), z`: the
                # pending transposes are made, and the tuple's code says so
                code = ", ".join(i.code for i in items)
                value = value.but(items=items, code=f"({code},)" if len(items) == 1 else f"({code})")
            if kept and any(is_permuted(i) for i in items):  # (rotary embedding's `return q_embed, k_embed`)
                # (the other tensors in torch's layout, the code saying so: mvitv2's `return x, cls_tok`, x an
                # image held channels-last beside a token held permuted)
                value = self.tuple_in_layouts(value, [self.as_plain(i) if i.is_tensor and not is_permuted(i) else i
                                                      for i in items])
                self.return_template = value
                return value
        if self.output_layout == "io" and self.mode == "forward":  # the main class: channels-last results
            return self.io_result(value)  # in the layout the model exchanges (`self.io_output`)
        if self.output_layout in ("source", "io") or self.mode not in ("forward", "function"):
            return self.as_plain(value) if value.is_tensor or value.kind == "tuple" else value
        if self.return_template is None and self.dead_branches:
            return value  # never runs: the returns that do run set the template
        if self.return_template is None:
            if value.kind == "tuple" and value.items is not None:
                value = self.returned_tuple(value)
            self.return_template = value
            return value
        template = self.return_template
        if (value.is_tensor and template.kind == "tuple") or (value.kind == "tuple" and template.is_tensor):
            either = image_or_images(value, template)
            if either is not None:  # `return outs` under `fork_feat`, else `return x`: channels-last either way
                self.return_template = either
                return value
            # `return x, x_pre_activ` under a constructor flag, else `return x`: no one template fits both; the
            # class is translated again returning everything in torch's layout (ClassTranslator.plain_returns)
            self.returns_disagree = True
        if value.kind == "python" and isinstance(value.static, list) and template.kind == "tuple":
            value = Value(value.code, "tuple", items=None)  # a list the body filled (`x_fuse.append(...)`): its
            # items in torch's layout
        if value.is_tensor and template.is_tensor and template.layout.startswith("permuted:"):
            return self.to_value_layout(value, template)  # (the first return's pending transpose, kept)
        if value.is_tensor and template.is_tensor:
            return to_layout(self.ctx, value, "channels_last" if template.channels_last else "source", template.rank)
        if value.kind == "tuple" and template.kind == "tuple" and template.items is not None:
            value = self.to_value_layout(value, template)  # item by item, as the first return left them
            alike = element_template(template)
            if value.kind == "tuple" and value.items is None and alike is not None:
                # `return [x]`, then `return x_fuse` (a list of unknown length): callers get a list whose items
                # are all alike, not a list of one
                self.return_template = Value(template.code, "tuple", items=None, static=("each", alike))
            return value
        held = element_template(template) if value.kind == "tuple" and template.kind == "tuple" else None
        if held is not None and holds_images(held):  # the first return was a list of channels-last images
            if value.items is None:
                return self.list_in_layout(value, Value("", "tuple", items=(held,)))
            return self.tuple_in_layouts(value, [to_layout(self.ctx, i, "channels_last", held.rank) if i.is_tensor
                                                 else i for i in value.items])
        return self.as_plain(value)

    def returned_features(self, value, item):
        """`return out`, a dict this body filled by key with channels-last images (`item`; torchvision's
        IntermediateLayerGetter): the callers of a class's forward or method read its values by key as they lie
        (`HeldTable`); the model's result, a body returning in torch's layout and a function give every value in
        torch's layout."""
        if self.output_layout == "io" and self.mode == "forward":
            return python(f"{self.ctx.use('each_image')}(self.io_output, {value.code})")
        plain = python(features_in_torch_layout(self.ctx, value.code))
        if self.output_layout == "source" or self.mode != "forward" or self.dead_branches:
            return plain
        template = self.return_template
        if template is None or isinstance(template.static, HeldTable) and template.static.item == item:
            self.return_template = python("", static=HeldTable(item, ""))
            return value
        self.returns_disagree = True
        return plain

    def returns_held_orders(self):
        """Whether this call may return a tensor in a permuted order, its pending transpose left to its callers
        (ClassBodyTranslator knows: a class only translated code calls)."""
        return False

    def returned_tuple(self, value):
        """The first tuple a class returns: its images stay channels-last (a NASNet cell's `(x, x_prev)`, a DPN
        block's `(resid, dense)`: callers read the items' layouts from the template, and `call_module` takes every
        image of a channels-last block's tuple so: one of unknown rank too, PreConvBlock's `x_pre_activ` after an
        activation porter cannot see); other items in torch's layout."""
        return self.tuple_in_layouts(value, [i if i.is_tensor and i.channels_last and (i.rank is None or i.rank > 2) else
                                             _images_list(i) or self.as_plain(i) for i in value.items])

    def io_result(self, value):
        """A value the main class returns: channels-last tensors through `self.io_output`, the rest in torch's
        layout."""
        if value.is_tensor:
            if value.channels_last and (value.rank or 0) > 2 and may_be_images(value):  # or a list of them
                return tensor(f"{self.ctx.use('each_image')}(self.io_output, {value.code})", value.rank)
            if value.channels_last and (value.rank or 0) > 2:
                return tensor(f"self.io_output({value.code})", value.rank)
            return self.as_plain(value)
        if value.kind == "tuple" and value.items:  # (a call's items read through it: the call made once)
            return self.tuple_in_layouts(value, [self.io_result(i) for i in value.items])
        template = element_template(value) if value.kind == "tuple" else None
        if template is not None and template.is_tensor and template.channels_last and (template.rank or 0) > 2:
            # a list of feature maps (SegFormer's four stages): each through `self.io_output`, which keeps them
            # channels-last for a model told it exchanges channels-last images
            return Value(f"{self.ctx.use('each_image')}(self.io_output, {value.code})", "tuple", items=None)
        return self.as_plain(value) if value.kind == "tuple" else value

    # --- compound statements -----------------------------------------------------------------------------
    def _stmt_ClassDef(self, statement, depth):
        """A layer class defined inside a method (GluonNLP's MLPAttentionCell defines `_NormalizedScoreProj` in its
        `__init__`): not translated yet; the name stands for a stub that raises when the class is built, so the
        method's other paths still run. Any other class is carried over as written."""
        bases = {self.source.imports.resolve(arg.value) for arg in statement.bases}
        if not bases & (BLOCK_BASES | MODULE_BASES):
            text = self.code(statement).strip("\n")
            return [INDENT * depth + line for line in _dedent(text).splitlines()], False
        message = self.stub_message(f"class {statement.name.value}", "a layer class defined inside a method is "
                                    "not translated yet; move it to module level")
        stub = f"(lambda *args, **kwargs: {self.ctx.use('not_supported')}({message!r}))"
        self.env[statement.name.value] = python(statement.name.value)
        return [f"{INDENT * depth}{statement.name.value} = {stub}"], False

    def _stmt_If(self, statement, depth):
        pad = INDENT * depth
        decided = flag_truth(statement.test, self.source.module_flags, self.source.imports.resolve)
        if decided is not None:
            # `if has_apex:` of a flag the module sets once (`has_apex = False` in its ImportError handler): only
            # the branch taken is translated (the other calls what the port never has)
            self.ctx.adjust(self.line, f"`if {self.code(statement.test)}:` is decided by module flags: only its "
                                       f"{'body' if decided else 'else branch'} is carried over")
            if decided:
                return self.block(statement.body, depth)
            orelse = statement.orelse
            if orelse is None:
                return [], False
            return self._stmt_If(orelse, depth) if isinstance(orelse, cst.If) else self.block(orelse.body, depth)
        test = self.expr(statement.test)
        if test.is_tensor:
            return self.tensor_if(statement, test, depth)
        if isinstance(test.static, bool) and (getattr(self, "static_attrs", None) or test.code in ("False", "True")):
            # a call specialised for constructor values that decide this test, or a test the port writes as a
            # constant (`if input.is_cuda and self.ngpu > 1:`): only the branch taken is kept
            if not getattr(self, "static_attrs", None):
                holds, kept = ("always", "body") if test.static else ("never", "else branch")
                self.ctx.adjust(self.line, f"`if {self.code(statement.test)}:` {holds} holds in the port: only "
                                           f"its {kept} is carried over")
            orelse = statement.orelse
            if test.static:
                return self.block(statement.body, depth)
            if orelse is None:
                return [], False
            return self._stmt_If(orelse, depth) if isinstance(orelse, cst.If) else self.block(orelse.body, depth)
        before, hoisted_before, following = dict(self.env), dict(self.hoisted), self.following
        paths = {name: values for name, values in self.path_values.pop(id(statement), {}).items()
                 if self.env.get(name) is values[0]}  # (an earlier `if` of this test left them per path)
        narrowed = isinstance_narrowing(statement.test, self.env, self.source)
        if narrowed is not None:  # `if isinstance(l, MaskedConv1d):` on a layer of several kinds
            self.env[narrowed[0]] = narrowed[1]
        self.env.update((name, values[0]) for name, values in paths.items())
        body_lines, body_done = self.in_branch(test.static is False, self.block, statement.body, depth + 1)
        after_body = dict(self.env)
        self.env.clear()
        self.env.update(before)
        self.env.update((name, values[1]) for name, values in paths.items())
        if narrowed is not None:
            self.env[narrowed[0]] = narrowed[2]
            after_body[narrowed[0]] = before[narrowed[0]]
        lines = [f"{pad}if {test.code}:"]
        orelse = statement.orelse
        else_lines, else_done, after_else = [], False, dict(self.env)
        keyword = None
        if orelse is not None:
            if isinstance(orelse, cst.If):
                keyword = "elif"
                else_lines, else_done = self.in_branch(test.static is True, self._stmt_If, orelse, depth)
                else_lines[0] = else_lines[0].replace(f"{pad}if ", f"{pad}elif ", 1)
            else:
                keyword = "else"
                else_lines, else_done = self.in_branch(test.static is True, self.block, orelse.body, depth + 1)
            after_else = dict(self.env)
            if narrowed is not None:
                after_else[narrowed[0]] = before[narrowed[0]]
        guard = self.closing_guard
        runs_until_last = guard[1] if guard is not None and guard[0] is statement else None
        if test.static is True or test.static is False:  # decided statically: only the branch taken binds names
            merged = {"env": after_body if test.static else after_else, "else_extra": []}
        elif runs_until_last is not None and not body_done and not else_done:
            # (last_turn.py) the next turn takes what one path leaves, the code after the loop what the other does
            carried, last = (after_body, after_else) if runs_until_last else (after_else, after_body)
            bound = names_bound_in(statement.body, loop_targets=True) | (
                names_bound_in(orelse.body, loop_targets=True) if isinstance(orelse, cst.Else) else set())
            self.last_turn_paths[id(statement)] = (bound, dict(last), test.code if runs_until_last else
                                                   f"not ({test.code})")
            merged = {"env": carried, "else_extra": []}
        else:
            if keyword == "else":
                _einsums_in_order_wanted(after_body, body_lines, after_else, else_lines, depth + 1, following)
            merged = self.merge(after_body, body_done, body_lines, after_else, else_done, else_lines, depth + 1,
                                keyword, unchanged=_unchanged_copies(before, hoisted_before), live=self.live_after,
                                continued=self.continued_by_same_test(statement), before=before)
        lines.extend(body_lines)
        if keyword == "elif":
            lines.extend(else_lines)
        elif keyword == "else":
            lines.append(f"{pad}else:")
            lines.extend(else_lines)
        elif merged["else_extra"]:
            lines.append(f"{pad}else:")
            lines.extend(merged["else_extra"])
        self.env.clear()
        self.env.update(merged["env"])
        if narrowed is not None and narrowed[0] in self.env:
            self.env[narrowed[0]] = before[narrowed[0]]  # (after the if, any of its kinds again)
        return lines, body_done and else_done and orelse is not None

    def live_after(self, name):
        """Whether code after the statement being translated may read variable `name` (conservatively: inside a
        loop, a later turn may; else a later statement of this block or of an enclosing one mentioning it, or a
        function defined in the body that does)."""
        if self.loop_depth or self.root_body is None:
            return True
        for statements in (*self.outer_followings, self.following):
            if any(name in self.mentioned(statement) for statement in statements):
                return True
        return name in self.mentioned_by_functions()

    def mentioned(self, node):
        key = id(node)
        if key not in self.mentions:
            self.mentions[key] = (node, names_in(node))
        return self.mentions[key][1]

    def mentioned_by_functions(self):
        """The names the functions and lambdas defined in the body mention."""
        if self.function_mentions is None:
            self.function_mentions = set()
            for node in descendants(self.root_body):
                if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                    self.function_mentions |= names_in(node)
        return self.function_mentions

    def continued_by_same_test(self, statement):
        """For `merge`: `continued(name, value_a, value_b)` leaves variable `name` as each path of `if` statement
        left it, where a later `if` of the same test is the next statement reading it (correlated_branches.py): the
        value the join holds then (each path of the later `if` takes its own), else None."""
        def continued(name, value_a, value_b):
            if name in self.mentioned_by_functions():
                return None
            later = later_branch_of_same_test(statement, self.following, name, self.code, self.mentioned)
            if later is None:
                return None
            joined = value_a.with_code(name)
            self.path_values.setdefault(id(later), {})[name] = (joined, value_b.with_code(name))
            self.ctx.adjust(self.source.line_of(statement), f"`{name}` is held as each path of `if "
                                                            f"{self.code(statement.test)}:` leaves it: the same test "
                                                            f"at line {self.source.line_of(later)} reads it next")
            return joined
        return continued

    def merge(self, env_a, done_a, lines_a, env_b, done_b, lines_b, depth, keyword, unchanged=None, live=None,
              continued=None, before=None):
        """Join two paths: variables whose layouts disagree go back to torch's order on both paths (converted in
        place on each path, never through a conversion hoisted inside the branch). `unchanged` maps a variable's
        value before the branch to the name of its channels-last copy hoisted before it: a path that leaves the
        variable as it was takes that copy instead, so the variable stays channels-last after the join (a residual
        block's `if self.conv3: X = self.conv3(X)` converts nothing). `live(name)`: whether the code after the join
        may read `name` (a variable it never reads is converted on neither path: LeViT's `q, k, v` of each branch).
        `before`: the variables' values before the branch (a path that leaves one as it was binds nothing new)."""
        outer_hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None
        try:
            return self._merge(env_a, done_a, lines_a, env_b, done_b, lines_b, depth, keyword, unchanged or {},
                               live, continued, before or {})
        finally:
            self.ctx.hoister = outer_hoister

    def _merge(self, env_a, done_a, lines_a, env_b, done_b, lines_b, depth, keyword, unchanged, live, continued,
               before):
        pad = INDENT * depth
        if done_a and not done_b:
            return {"env": env_b, "else_extra": []}
        if done_b and not done_a:
            return {"env": env_a, "else_extra": []}
        merged, else_extra = dict(env_b), []
        merged.update(env_a)
        for name in sorted(set(env_a) & set(env_b)):
            value_a, value_b = env_a[name], env_b[name]
            if self.list_relaid(name, value_a, value_b) is not None:  # lists: one path holds channels-last images,
                for value, lines in ((value_a, lines_a), (value_b, lines_b)):  # the other not: torch's on both
                    if images_held(value) is not None:
                        fix = f"{pad}{name} = {self.as_plain(resolved(value).with_code(name)).code}"
                        if lines is lines_a or keyword == "else":
                            _insert_before_trailing_pass(lines, fix)
                        elif keyword is None:
                            else_extra.append(fix)
                        else:
                            lines.append(fix)
                merged[name] = Value(name, "tuple", items=None)
                continue
            if isinstance(value_a, Value) and value_a.layout == "raises":
                merged[name] = value_b  # that path raises first: the other one says what the name holds
                continue
            image = optional_image(value_a, value_b) if isinstance(value_a, Value) and isinstance(value_b, Value) \
                else None
            if image is not None:  # None on one path, an image on the other: the image, absent on a first turn
                merged[name] = image.with_code(name)
                continue
            pair = optional_tuple(value_a, value_b) if isinstance(value_a, Value) and isinstance(value_b, Value) \
                else None
            if pair is not None:  # None on one path, a tuple on the other (a scale and shift under `if time_emb`)
                merged[name] = pair.with_code(name)
                continue
            held = held_beside_untyped(value_a, value_b)
            untyped = (value_b if held is value_a else value_a) if held is not None else None
            if held is not None and (live is None or live(name)) and before.get(name) is not untyped:
                # (only where the untyped value is new on its path, `x = pack_padded_sequence(x, ...)`: a name a
                # path leaves as it was before the `if`, HDemucs' `skip` rebound on every turn, is left alone)
                # a tensor held channels-last on one path, a value porter cannot type on the other (tacotron's CBHG:
                # `if input_lengths is not None: x = pack_padded_sequence(x, ...)`, then `self.gru(x)`): readers take
                # the unknown one as it is, in torch's layout, so the tensor goes to torch's layout on its path
                plain = to_layout(self.ctx, held.with_code(name), "source") if held.is_tensor else \
                    self.as_plain(resolved(held).with_code(name))
                fix = f"{pad}{name} = {plain.code}"
                if held is value_a:
                    _insert_before_trailing_pass(lines_a, fix)
                elif keyword == "else":
                    _insert_before_trailing_pass(lines_b, fix)
                elif keyword is None:
                    else_extra.append(fix)
                else:
                    lines_b.append(fix)
                merged[name] = (value_b if held is value_a else value_a).with_code(name)
                continue
            if merge_layouts(value_a, value_b) is None:
                if _literals_disagree(value_a, value_b):
                    # (`interpolate = True` on one path, False before: a later `if interpolate:` is a run-time test,
                    # not one path's constant deciding which branch the port keeps and which layouts it holds)
                    merged[name] = value_a.but(static=None)
                    continue
                if isinstance(value_a, Value) and isinstance(value_a.static, EinsumRecipe) and value_a is not value_b:
                    merged[name] = value_a.but(static=None)  # (one path's einsum: re-emitting it would drop the other)
                if isinstance(value_a, Value) and isinstance(value_b, Value) and value_a.is_tensor and \
                        value_b.is_tensor and value_a.rank != value_b.rank:
                    # (channels-last on both paths, a map on one and a sequence on the other: the channels are last
                    # either way, but an axis read for one rank is another axis of the other: rank unknown)
                    merged[name] = merged[name].but(rank=None)
                continue
            if live is not None and not live(name):
                merged[name] = value_a.with_code(name)  # (never read after the join: left as each path has it)
                continue
            joined = continued(name, value_a, value_b) if continued is not None and keyword != "elif" else None
            if joined is not None:  # (read next by an `if` of the same test: left as each path has it)
                merged[name] = joined
                continue
            fix_a = f"{pad}{name} = {to_layout(self.ctx, value_a.with_code(name), 'source').code}"
            fix_b = f"{pad}{name} = {to_layout(self.ctx, value_b.with_code(name), 'source').code}"
            copy_a, copy_b = unchanged.get((name, id(value_a))), unchanged.get((name, id(value_b)))
            if copy_b is not None and value_a.channels_last and value_b.rank in (None, value_a.rank):
                fix_a, fix_b, merged[name] = None, f"{pad}{name} = {copy_b}", value_a.with_code(name)
            elif copy_a is not None and value_b.channels_last and value_a.rank in (None, value_b.rank):
                fix_a, fix_b, merged[name] = f"{pad}{name} = {copy_a}", None, value_b.with_code(name)
            else:  # torch's layout on both paths; of one rank only when both agree (a flattened vector on one)
                merged[name] = tensor(name, value_a.rank if value_a.rank == value_b.rank else None)
            if fix_a is not None and (value_a.layout != "source" or copy_a is not None):
                _insert_before_trailing_pass(lines_a, fix_a)
            if fix_b is not None and (value_b.layout != "source" or copy_b is not None):
                if keyword == "else":
                    _insert_before_trailing_pass(lines_b, fix_b)
                elif keyword is None:
                    else_extra.append(fix_b)
                else:  # elif chain: convert after its own branch lines (best effort)
                    lines_b.append(fix_b)
        return {"env": merged, "else_extra": else_extra}

    def list_relaid(self, name, value, wanted):
        """Lists: variable `name`, holding list `value`, converted item by item to hold its items as list `wanted`
        holds them (channels-last images or torch's layout), or None when they agree already (or either is no
        list)."""
        if not (isinstance(value, Value) and isinstance(wanted, Value) and resolved(value).kind == "tuple" and
                resolved(wanted).kind == "tuple"):
            return None
        held, target = images_held(value), images_held(wanted)
        if (held is None) == (target is None):
            return None
        current = resolved(value).with_code(name)
        if target is not None:
            return self.list_in_layout(current, Value("", "tuple", items=(target,)))
        return self.as_plain(current)

    def items_relaid(self, name, value, wanted, allowed):
        """A list or tuple of known items held in variable `name` as `value` holds them, brought item by item to the
        layouts `wanted`'s items have (a loop whose body leaves `[self.conv(a) + b, b]` in what entered as two images
        in torch's layout); None where they agree, either's items are unknown, or `allowed(have, want)` refuses a
        move."""
        current, target = resolved(value), resolved(wanted)
        if not (isinstance(current, Value) and isinstance(target, Value) and current.kind == "tuple" and
                target.kind == "tuple"):
            return None
        current_items, target_items = _known_items(current, target), _known_items(target, current)
        if current_items is None or target_items is None or len(current_items) != len(target_items):
            return None
        items, moved = [], False
        for index, (have, want) in enumerate(zip(current_items, target_items)):
            item = have.with_code(f"{name}[{index}]")
            if have.is_tensor and want.is_tensor and have.layout != want.layout:
                if is_permuted(want) or not allowed(have, want):
                    return None
                item = to_layout(self.ctx, item, "channels_last" if want.channels_last else "source", want.rank)
                moved = True
            items.append(item)
        if not moved:
            return None
        rest = f", *{name}[{len(items)}:]" if current.items is None else ""  # (a list that may have grown: its
        # items past those the other holds kept as they are)
        return Value(f"[{', '.join(item.code for item in items)}{rest}]", "tuple", items=tuple(
            item.with_code(f"{name}[{index}]") for index, item in enumerate(items)))

    def tensor_if(self, statement, test, depth):
        """Data-dependent branch -> tf.cond over two nested functions (Keras does not AutoGraph `call`)."""
        pad = INDENT * depth
        orelse = statement.orelse
        if orelse is not None and not isinstance(orelse, cst.Else):
            message = self.stub_message("elif on a tensor value", "rewrite as nested if/else or torch.where")
            return [f"{pad}raise NotImplementedError({message!r})"], True
        bodies = [statement.body] + ([orelse.body] if orelse is not None else [])
        if any(has_escape(body) for body in bodies):
            message = self.stub_message("if on a tensor value", "a data-dependent branch that returns or breaks; "
                                        "rewrite with torch.where so it maps to tf.where")
            return [f"{pad}raise NotImplementedError({message!r})"], True
        before = dict(self.env)
        per_branch = [names_bound_in(body, loop_targets=True) for body in bodies] + (
            [set()] if len(bodies) == 1 else [])
        assigned = sorted(set().union(*per_branch))
        in_all = set.intersection(*per_branch)
        carried = [name for name in assigned if name in before or name in in_all]
        if len(carried) != len(assigned):
            missing = sorted(set(assigned) - set(carried))
            message = self.stub_message("if on a tensor value",
                                        f"{', '.join(missing)} assigned in only some paths of a data-dependent branch")
            return [f"{pad}raise NotImplementedError({message!r})"], True
        condition = to_layout(self.ctx, test, "source")
        lines = [f"{pad}# porter: data-dependent `if` -> tf.cond where its value is unknown when traced (both paths "
                 "traced, one runs)"]
        defaults = ", ".join(f"{name}={name}" for name in carried if name in before)
        results = []
        for label, body in (("then", bodies[0]), ("else", bodies[1] if len(bodies) > 1 else None)):
            self.env.clear()
            self.env.update(before)
            lines.append(f"{pad}def _{label}_branch({defaults}):")
            if body is not None:
                body_lines, _ = self.block(body, depth + 1)
                lines.extend(line for line in body_lines if line.strip() != "pass")
            returned = [to_layout(self.ctx, self.env[name].with_code(name), "source") if isinstance(
                self.env.get(name), Value) and self.env[name].is_tensor else python(name) for name in carried]
            results.append(returned)
            lines.append(f"{pad}{INDENT}return ({', '.join(v.code for v in returned)},)" if returned else
                         f"{pad}{INDENT}return ()")
        targets = ", ".join(carried) + ("," if len(carried) == 1 else "")
        call = f"{self.ctx.use('tensor_cond')}({condition.code}, _then_branch, _else_branch)"
        lines.append(f"{pad}{targets} = {call}" if carried else f"{pad}{call}")
        self.env.clear()
        self.env.update(before)
        for name, value in zip(carried, results[0]):
            self.env[name] = tensor(name, value.rank) if value.is_tensor else python(name)
        return lines, False

    def _stmt_For(self, statement, depth):
        head = self.in_place_loop_lines(statement, depth) if self.mode in ("forward", "function") else []
        with self.inside_loop():
            lines, terminated = self._for_statement(statement, depth)
        return head + lines, terminated

    def in_place_loop_lines(self, statement, depth):
        """Before `for layer in self.rep: y = layer(y)` over layers one of which is an in-place activation
        (passes/in_place_activations.py `in_place_loop_head`): the names torch's first turn overwrites, rebound to
        what it leaves in them (`in_place_head`), where read after; `y` itself only where the loop does not
        rebind it."""
        found = in_place_loop_head(self.source, self.info, statement)
        if found is None:
            return []
        iterable, name = found
        rebound = names_bound_in(statement.body)
        call = cst.Call(iterable, [cst.Arg(cst.Name(name))])
        return self.rebind_overwritten(call, "maybe first layer", call, INDENT * depth,
                                       name if name in rebound else None)

    @contextlib.contextmanager
    def inside_loop(self):
        """While a loop is translated (live_after: a later turn may read what its body binds)."""
        self.loop_depth += 1
        try:
            yield
        finally:
            self.loop_depth -= 1

    def _for_statement(self, statement, depth):
        iterable = self.expr(statement.iter)
        guard = last_turn_guard(statement, self.code, lambda node: self.expr(node).static)
        outer, self.closing_guard = self.closing_guard, guard
        try:
            return self._for_lines(statement, iterable, guard, depth)
        finally:
            self.closing_guard = outer

    def _for_lines(self, statement, iterable, guard, depth):
        pad = INDENT * depth
        framed = self.frames_held(statement.body)
        before = dict(self.env)
        entering_none = [name for name in names_bound_in(statement.body) if isinstance(before.get(name), Value) and
                         holds_none(before[name])]
        mark = self.translation_mark()
        tables = [growing_table(v) for v in before.values() if growing_table(v) is not None and
                  not growing_table(v).decided]
        self.bind_loop_target(statement.target, iterable)
        self.forget_variation(statement.body)
        body_lines, _ = self.block(statement.body, depth + 1)
        if mark is not None and relaid_in_loop(tables):  # (a table read before it is stored, of what an earlier
            # turn stored: channels-last images, the body again)
            self.forget_translations(mark)
            self.env.clear()
            self.env.update(before)
            mark = self.translation_mark()
            self.bind_loop_target(statement.target, iterable)
            self.forget_variation(statement.body)
            body_lines, _ = self.block(statement.body, depth + 1)
        entering = self.loop_entry_conversions(before)
        if entering:
            # an image entering in torch's layout that the body leaves channels-last (`x = self.center(head)`, then
            # `x = block(x, skip)` per stage): converted once before the loop, the body translated again for it,
            # rather than converted back and forth in every iteration; what the first pass translated for torch's
            # layout is forgotten (a block class first called in the body, with the image in a tuple: QuartzNet's
            # `l((out, lens))`, takes it as the body now holds it)
            self.forget_translations(mark)
            self.env.clear()
            self.env.update(before)
            for name, converted in entering.items():
                self.env[name] = converted.with_code(name)
            before = dict(self.env)
            mark = self.translation_mark()
            self.bind_loop_target(statement.target, iterable)
            self.forget_variation(statement.body)
            body_lines, _ = self.block(statement.body, depth + 1)
        optional = self.images_after_none(entering_none, before) if entering_none and mark is not None else {}
        optional.update(self.images_from_earlier_turns(statement.body, before) if mark is not None else {})
        if optional:
            # a name entering as None that the body leaves an image (x2 of a dual-path container, None before its
            # first dual-path child): the body again, the name entering as that image, and what the first pass
            # translated for None forgotten (the children a later turn hands the image)
            self.forget_translations(mark)
            self.env.clear()
            self.env.update(before)
            self.env.update(optional)
            before = dict(self.env)
            self.bind_loop_target(statement.target, iterable)
            self.forget_variation(statement.body)
            body_lines, _ = self.block(statement.body, depth + 1)
        changed = self.kinds_changed(before)
        after = dict(self.env)
        if changed:
            # a name entering as an image and left a list by the body, or the other way (timm's SequentialList
            # hands each block its predecessor's list: `x = module(x)`): either on later turns, so the body is
            # translated again for a value of either kind, in torch's layout, which `call_module` converts
            self.env.clear()
            self.env.update(before)
            for name in changed:
                if _channels_last_either(before[name], after[name]):
                    # images held channels-last either way (HRNet's branches from stage to stage): held so, an
                    # image or a list of them, which `call_module(..., held="channels_last")` takes and returns
                    self.env[name] = tensor(name, None, "channels_last")
                    continue
                plain = self.plain_keeping_kind(before[name].with_code(name))
                if plain.code != name:
                    entering[name] = plain
                self.env[name] = python(name)
            before = dict(self.env)
            self.bind_loop_target(statement.target, iterable)
            self.forget_variation(statement.body)
            body_lines, _ = self.block(statement.body, depth + 1)
        last_turn = self.last_turn_paths.pop(id(guard[0]), None) if guard is not None else None
        if _no_children(iterable):  # the class's constructions hand it no child: the body never runs
            self.env.clear()
            self.env.update(before)
        else:
            for name, fix in self.loop_fixes(before, depth + 1, statement.body):
                if last_turn is not None and name in last_turn[0]:
                    # (a name the closing `if` binds: brought back for the next turn only, on the path it takes)
                    _insert_before_trailing_pass(body_lines, f"{pad}{INDENT}if {last_turn[2]}:")
                    body_lines.append(f"{INDENT}{fix}")
                else:
                    _insert_before_trailing_pass(body_lines, fix)
            if last_turn is not None:  # after the loop: what its last turn left
                self.env.update({name: value for name, value in last_turn[1].items() if name in last_turn[0]})
        lines = [f"{pad}{name} = {converted.code}" for name, converted in {**framed, **entering}.items()] + \
            [f"{pad}for {self.code(statement.target)} in {self.iterable_code(iterable)}:"] + body_lines
        if statement.orelse is not None:
            else_lines, _ = self.block(statement.orelse.body, depth + 1)
            lines += [f"{pad}else:"] + else_lines
        return lines, False

    def _stmt_While(self, statement, depth):
        with self.inside_loop():
            return self._while_statement(statement, depth)

    def _while_statement(self, statement, depth):
        pad = INDENT * depth
        test = self.expr(statement.test)
        if test.is_tensor:
            message = self.stub_message("while on a tensor value", "data-dependent loop; not compilable by XLA")
            return [f"{pad}raise NotImplementedError({message!r})"], True
        before = dict(self.env)
        self.forget_variation(statement.body)
        body_lines, _ = self.block(statement.body, depth + 1)
        for _, fix in self.loop_fixes(before, depth + 1, statement.body):
            _insert_before_trailing_pass(body_lines, fix)
        return [f"{pad}while {test.code}:"] + body_lines, False

    def plain_keeping_kind(self, value):
        """`value` in torch's layout, a list or tuple of images converted item by item into a container of its own
        type (a block testing `isinstance(x, list)` on a later turn tells the two apart)."""
        items = resolved(value).items
        if value.kind != "tuple" or not items or not all(i.is_tensor for i in items) or \
                len({(i.layout, i.rank) for i in items}) != 1:
            return self.as_plain(value)
        element = to_layout(self.ctx, items[0].with_code("_each"), "source")
        if element.code == "_each":
            return value
        return Value(f"type({value.code})({element.code} for _each in {iterable_code(value.code)})", "tuple", items=None,
                     static=("each", element.with_code("")))

    def kinds_changed(self, before):
        """Names a loop body leaves of another kind than they entered as (a tensor and a list), in entry order."""
        changed = []
        for name, old in before.items():
            new = self.env.get(name)
            if isinstance(old, Value) and isinstance(new, Value) and {resolved(old).kind, resolved(new).kind} == \
                    {"tensor", "tuple"}:
                changed.append(name)
        return changed

    def forget_variation(self, body):
        """The names a loop body rebinds hold, from its second turn on, what the body computes: not the constant or
        the coordinate map they may enter as (ir/varying.py), so nothing in the body converts them as one."""
        for name in names_bound_in(body):
            value = self.env.get(name)
            if isinstance(value, Value) and value.varies_along is not None:
                self.env[name] = value.but(varies_along=None)

    def images_after_none(self, names, before):
        """{name: the image, as its own name} for those of `names` (bound by the loop body, None on entry: held in
        `before`) that the body leaves an image (optional_values.py)."""
        found = {}
        for name in names:
            new = self.env.get(name)
            if isinstance(new, Value) and new.is_tensor:
                found[name] = new.but(channels=None, static=None).with_code(name)
        return found

    def images_from_earlier_turns(self, body, before):
        """{name: the image, as its own name} for the names unbound on entry (not in `before`) that the loop body
        reads on a path of a later turn before binding them, and leaves images held in another layout than
        torch's (ESPNet's `if i == 0: out1 = layer(out0)` / `else: out1 = layer(out1)`): read untyped on the first
        pass, such a name was taken for a tensor in torch's layout."""
        found = {}
        for name in names_bound_in(body):
            new = self.env.get(name)
            if name in before or not isinstance(new, Value) or not new.is_tensor or new.layout == "source" or \
                    bound_before_read(body, name):
                continue
            found[name] = new.but(channels=None, static=None).with_code(name)
        return found

    def translation_mark(self):
        """A mark of the translations made so far, to take back with `forget_translations` (ClassBodyTranslator
        keeps them); None where there is none."""
        return None

    def forget_translations(self, mark):
        """Take back the translations made since `mark` (ClassBodyTranslator)."""

    def frames_held(self, body):
        """{name: its Value moved} for each tensor of images a loop reads one by one as frames (`video[:, t]`,
        passes/frame_inputs.py) and nothing reads after it: moved once to (B, T, *spatial, C) before the loop, each
        frame then channels-last as it lies; the names are bound so here."""
        if self.loop_depth > 1:
            return {}
        later = [statement for statements in (*self.outer_followings, self.following) for statement in statements]
        candidates = {name for name, value in self.env.items() if isinstance(value, Value) and value.is_tensor and
                      value.layout == "source" and value.rank is not None and value.rank >= 4 and
                      not any(name in self.mentioned(statement) for statement in later)}
        framed = {}
        for name in frame_sources(body, candidates - self.mentioned_by_functions()) if candidates else ():
            rank = self.env[name].rank
            order = frames_order(rank)
            framed[name] = tensor(f"{self.ctx.use('permute_axes')}({name}, {order})", rank).but(
                layout=permuted_layout(order), dtype=self.env[name].dtype)
            self.env[name] = framed[name].with_code(name)
        return framed

    def loop_entry_conversions(self, before):
        """{name: its Value converted channels-last} for the loop-carried images a loop body took in torch's layout
        and left channels-last (each would otherwise be converted back at the end of every iteration), or in
        torch's layout for those that entered as a pending transpose the body rebinds."""
        entering = {}
        outer_hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None  # `x = to_channels_last(x)`
        try:
            self._loop_entries(before, entering)
        finally:
            self.ctx.hoister = outer_hoister
        return entering

    def _loop_entries(self, before, entering):
        for name, old in before.items():
            new = self.env.get(name)
            relaid = self.items_relaid(name, old, new, lambda have, want: have.layout == "source" and
                                       want.channels_last and None not in (have.rank, want.rank) and
                                       have.rank == want.rank > 2)
            if relaid is None and isinstance(old, Value) and isinstance(new, Value) and (
                    _images_to_hold(resolved(old), resolved(new)) or name in self.appended_channels_last and
                    _images_to_hold(resolved(old), _held_channels_last(resolved(old)))):
                # (or one the body appends channels-last images to: RetinaNet's `feats = [x]`, then
                # `feats.append(down(feats[-1]))` per level)
                # a list of images in torch's layout a body rebinds to channels-last ones (`feats =
                # [conv(feats[0])]`): moved once before the loop, not back and forth in every turn
                relaid = self.list_in_layout(resolved(old).with_code(name), Value("", "tuple", items=(
                    images_held(_held_channels_last(resolved(old))),)))
            if relaid is not None:
                # a list of images in torch's layout the body leaves channels-last, position by position
                # (`feats = cell(feats[0], feats[1])` of a cell returning `[self.conv(a) + b, b]`): moved once before
                # the loop, the body translated again for it
                entering[name] = relaid
                continue
            if isinstance(old, Value) and isinstance(new, Value) and old.is_tensor and new.is_tensor and \
                    old.layout.startswith("permuted:") and new.layout != old.layout:
                # a pending transpose the body rebinds (`x = layer(x)` per layer): settled once before the loop,
                # not inside the body, where later iterations would move the layer's result again
                entering[name] = to_layout(self.ctx, old.with_code(name), "source")
                continue
            if isinstance(old, Value) and isinstance(new, Value) and old.is_tensor and new.is_tensor and \
                    old.layout == "source" and is_permuted(new) and new.rank is not None and new.rank > 3 and \
                    old.rank in (None, new.rank) and not new.unit_dims and physical_order(new)[0] == 0:
                # (a sequence of frames `torch.stack(outs, 1)` of channels-last images, held (B, H, W, T, C), fed
                # back as `x[:, t]` per frame: moved once before the loop, each frame then an image as it lies)
                entering[name] = tensor(f"{self.ctx.use('permute_axes')}({name}, {physical_order(new)})",
                                        new.rank).but(layout=new.layout)
                continue
            if not (isinstance(old, Value) and isinstance(new, Value) and old.is_tensor and new.is_tensor and
                    old.layout == "source" and new.layout == "channels_last"):
                continue
            rank = old.rank or new.rank
            if rank is not None and rank <= 2 or None not in (old.rank, new.rank) and old.rank != new.rank:
                continue
            entering[name] = to_layout(self.ctx, old.with_code(name), "channels_last", rank)

    def loop_fixes(self, before, depth, body):
        """(name, statement) pairs that bring loop-carried tensors back to their layout at loop entry (converted in
        place: a conversion hoisted before the loop holds the value of the first iteration only)."""
        outer_hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None
        try:
            return self._loop_fixes(before, depth, body)
        finally:
            self.ctx.hoister = outer_hoister

    def _loop_fixes(self, before, depth, body):
        fixes = []
        for name, old in before.items():
            new = self.env.get(name)
            relaid = self.list_relaid(name, new, old)
            if relaid is None:
                relaid = self.items_relaid(name, new, old, lambda have, want: True)
            if relaid is not None:  # a list of images whose layout the body changed: back to the one at entry
                fixes.append((name, f"{INDENT * depth}{name} = {relaid.code}"))
                self.env[name] = old
                continue
            if isinstance(old, Value) and isinstance(new, Value) and old.kind == "python" and old.static is None and \
                    not holds_none(old) and new.is_tensor and new.layout not in ("source", "raises") and \
                    not bound_before_read(body, name):
                # a value porter could not type on entry (`h, c = hidden_state[i]` of a list a method built), which
                # the body reads in torch's layout, left an image held otherwise (a ConvLSTM cell's state):
                # back to torch's layout for the next turn
                plain = to_layout(self.ctx, new.with_code(name), "source")
                fixes.append((name, f"{INDENT * depth}{name} = {plain.code}"))
                self.env[name] = old
                continue
            if not (isinstance(old, Value) and isinstance(new, Value) and old.is_tensor and new.is_tensor):
                continue
            if old.layout == new.layout or (old.channels_last == new.channels_last and "permuted" not in
                                            old.layout + new.layout):
                continue
            converted = to_layout(self.ctx, new.with_code(name), "channels_last" if old.channels_last else "source",
                                  old.rank)
            if old.layout.startswith("permuted:"):
                continue  # cannot re-create a pending transpose; the body keeps torch's order
            fixes.append((name, f"{INDENT * depth}{name} = {converted.code}"))
            self.env[name] = old
        return fixes

    def _stmt_With(self, statement, depth):
        pad = INDENT * depth
        items = []
        for item in statement.items:
            value = self.expr(item.item)
            alias = f" as {self.code(item.asname.name)}" if item.asname is not None else ""
            items.append(value.code + alias)
        body, done = self.block(statement.body, depth + 1)
        if all(i.startswith("contextlib.nullcontext()") for i in items):
            self.ctx.use("contextlib")
        return [f"{pad}with {', '.join(items)}:"] + body, done

    def _stmt_FunctionDef(self, statement, depth):
        """A function defined in a body (a closure): a placeholder line here, its body translated at its first call
        with the values that call hands over (their layouts, as for in-file functions) and the enclosing
        variables, or with parameters of unknown kind when nothing calls it (block() fills the placeholder).
        Annotations go (they may name torch types), decorators are translated; async functions are kept as written."""
        if statement.asynchronous is not None:
            text = self.code(statement).strip("\n")
            return [INDENT * depth + line if line else line for line in _dedent(text).splitlines()], False
        name = statement.name.value
        nested = NestedFunction(statement, depth, f"#porter-nested-function {name} {id(statement)}", dict(self.env))
        self.nested_functions[name] = nested
        self.env[name] = python(name, static=("local-function", name))
        return [nested.marker], False

    def local_function_call(self, name, node):
        """A call of a function defined in this body: tensors go in in torch's layout and come out in the layout
        of its first return (as a method's); its body is translated at the first call. A call handing over other
        ranks than the first did gets a result of unknown rank (torch's layout) or kind."""
        nested = self.nested_functions.get(name)
        args, kwargs = self.arg_values(node)
        if nested is not None and nested.lines is None:
            nested.held = _orders_wanted_in(nested.statement, args)
            nested.images = {i for i, v in enumerate(args) if i not in nested.held and v.is_tensor and
                             v.channels_last and v.rank is not None}  # (`gate(self.a(x))`: taken as held)
        held = nested.held if nested is not None else {}
        images = nested.images if nested is not None else set()
        args = [self._held_item(v, held[i]) if i in held else to_layout(self.ctx, v, "channels_last", v.rank)
                if i in images and v.is_tensor else self._plain_item(v) for i, v in enumerate(args)]
        kwargs = {k: self._plain_item(v) for k, v in kwargs.items()}
        ranks = tuple(v.rank for v in [*args, *kwargs.values()] if v.is_tensor)
        if nested is not None and nested.lines is None:
            nested.ranks = ranks
            self.translate_local_function(nested, args, kwargs)
        code = f"{name}({self.join_args(args, kwargs)})"
        template = nested.template if nested is not None else None
        if template is not None and ranks != nested.ranks:  # other ranks than it was translated for
            template = template.but(rank=None) if template.layout == "source" else None
        return result_of(template, code) if template is not None else python(code)

    def _held_item(self, value, order):
        """A tensor handed to a local function that takes it stored in `order` (torch dims): an einsum written in
        that order, else settled to it."""
        value = to_layout(self.ctx, value, "source")
        if physical_order(value) == order:
            return value
        return tensor(settle(value, order, self.ctx), value.rank).but(layout=layout_of_order(order),
                                                                      dtype=value.dtype)

    def _plain_item(self, value):
        """Tensors in torch's layout; lists and unpacked lists as they are (their items keep their layouts, which
        the function's body is translated for)."""
        return self.as_plain(value) if value.is_tensor else value

    def translate_local_function(self, nested, args, kwargs, returns_in_order=False):
        """`returns_in_order`: its returns in torch's layout (a function no call here reads: what calls it
        elsewhere, `call_module` on a closure a factory returns, takes its results so)."""
        statement = nested.statement
        params = statement.params
        positional = [*params.posonly_params, *params.params]
        bound = {}
        starred = next((i for i, v in enumerate(args) if v.kind == "starred"), None)
        if starred is not None:  # `f(*items)`: what follows the unpacking is not known one by one
            if starred >= len(positional) and isinstance(params.star_arg, cst.Param) and starred == len(args) - 1:
                items = args[starred]  # `def f(*inputs)` called as `f(*features)`: inputs holds features' items
                bound[params.star_arg.name.value] = items.but(code=params.star_arg.name.value, kind="tuple")
            args = args[:starred]
        for index, param in enumerate(positional):
            given = args[index] if index < len(args) else kwargs.get(param.name.value)
            if given is not None:
                bound[param.name.value] = _as_parameter(given, param.name.value)
        for param in params.kwonly_params:
            if param.name.value in kwargs:
                bound[param.name.value] = _as_parameter(kwargs[param.name.value], param.name.value)
        names = [p.name.value for p in (*positional, *params.kwonly_params)] + [
            p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        nested.lines = []  # a recursive call inside finds it translated
        saved = (dict(self.env), self.output_layout, self.return_template, self.nested_returns, self.line,
                 self.ctx.line)
        self.env.update({name: bound.get(name, python(name)) for name in names})
        # returns agree on the first one's layout, as a method's do (callers convert what they need)
        self.output_layout, self.return_template, self.nested_returns = (
            "source" if returns_in_order else None), None, []
        try:
            nested.lines, _ = self.block(statement.body, nested.depth + 1)
            returned, first = self.nested_returns, self.return_template
        finally:
            env, self.output_layout, self.return_template, self.nested_returns, self.line, self.ctx.line = saved
            self.env.clear()
            self.env.update(env)
        parts = [self._param_text(param) for param in params.posonly_params]
        parts += ["/"] if params.posonly_params else []
        parts += [self._param_text(param) for param in params.params]
        if isinstance(params.star_arg, cst.Param):
            parts.append(f"*{params.star_arg.name.value}")
        elif params.kwonly_params:
            parts.append("*")
        parts += [self._param_text(param) for param in params.kwonly_params]
        if params.star_kwarg is not None:
            parts.append(f"**{params.star_kwarg.name.value}")
        decorators = [f"{INDENT * nested.depth}@{self.expr(d.decorator).code}" for d in statement.decorators]
        header = f"{INDENT * nested.depth}def {statement.name.value}({', '.join(parts)}):"
        nested.header = "\n".join([*decorators, header])
        # what a call gives: a tensor in the first return's layout when every return gives one
        if returned and all(value.is_tensor for value in returned) and first is not None and first.is_tensor:
            ranks = {value.rank for value in returned}
            nested.template = first.but(rank=ranks.pop() if len(ranks) == 1 else None)
            if nested.template.rank is None and nested.template.layout != "source":
                nested.template = None

    def _fill_local_functions(self, lines):
        """Replace the placeholders of functions defined in this block by their translations (uncalled ones are
        translated now, with parameters of unknown kind)."""
        for name, nested in list(self.nested_functions.items()):
            try:
                at = lines.index(nested.marker)
            except ValueError:
                continue
            if nested.lines is None:  # never called: the enclosing variables as they were where it is defined
                # (`idc = []` then `def f(): idc.extend(...)`, `idc = torch.tensor(idc)` after it: idc is a list)
                current = dict(self.env)
                self.env.update(nested.env)
                try:
                    self.translate_local_function(nested, [], {}, returns_in_order=True)
                finally:
                    self.env.clear()
                    self.env.update(current)
            lines[at:at + 1] = [nested.header, *nested.lines]
            if self.nested_functions.get(name) is nested:
                del self.nested_functions[name]

    def _param_text(self, param):
        if param.default is None:
            return param.name.value
        default = self.expr(param.default)
        return f"{param.name.value}={self.as_plain(default).code if default.is_tensor else default.code}"

    def _stmt_Try(self, statement, depth):
        pad = INDENT * depth
        body, _ = self.block(statement.body, depth + 1)
        lines = [f"{pad}try:"] + body
        for handler in statement.handlers:
            header = self.code(handler).split(":", 1)[0].strip()
            handler_lines, _ = self.block(handler.body, depth + 1)
            lines += [f"{pad}{header}:"] + handler_lines
        if statement.finalbody is not None:
            final, _ = self.block(statement.finalbody.body, depth + 1)
            lines += [f"{pad}finally:"] + final
        return lines, False


def _in_place_chain(node, through_data=False):
    """`g.mul_(2).add_(y)` -> [Name g, the mul_ call, the add_ call]: in-place tensor methods called on a name, one
    on the other's result, innermost first; None for anything else. `through_data`: on a name's `.data`
    (`p.data.normal_().mul_(0.1)` -> [the Attribute p.data, ...]) instead."""
    calls = []
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value.endswith("_") and not node.func.attr.value.startswith("_"):
        calls.append(node)
        node = node.func.value
    if through_data:
        named = isinstance(node, cst.Attribute) and node.attr.value == "data" and isinstance(node.value, cst.Name)
        return [node, *reversed(calls)] if calls and named else None
    return [node, *reversed(calls)] if calls and isinstance(node, cst.Name) else None


def _dedent(text):
    if "\n" not in text and text[:1] not in (" ", "\t"):  # one unindented line (most): dedent would return it as is
        return text
    import textwrap

    return textwrap.dedent(text)


def _spatial(dim, rank):
    """Whether torch dim `dim` of a tensor of `rank` comes after an image's channels."""
    return rank is not None and rank > 2 and dim > 1


def _einsums_in_order_wanted(env_a, lines_a, env_b, lines_b, depth, following):
    """Variables both paths of an if/else bind last to an einsum (attention's SDPA, or its einsums written out) that
    the statements after read first through a transpose (`x.transpose(1, 2).reshape(B, N, C)`): each path's einsum is
    written in the order that makes that transpose a relabelling, and the variable holds that order (no Transpose).
    `env_a`/`env_b` are updated, `lines_a`/`lines_b` rewritten in place."""
    pad = INDENT * depth
    for name in sorted(set(env_a) & set(env_b)):
        value_a, value_b = env_a[name], env_b[name]
        if not all(isinstance(v, Value) and isinstance(v.static, EinsumRecipe) and v.is_tensor and
                   v.layout == "source" and v.rank is not None for v in (value_a, value_b)) or \
                value_a.rank != value_b.rank or value_a is value_b:
            continue
        order = order_wanted_next(following, name, value_a.rank)
        if order is None or order == list(range(value_a.rank)):
            continue
        written = [_last_code_line(lines) for lines in (lines_a, lines_b)]
        if any(index is None or lines[index] != f"{pad}{name} = {value.static.code()}"
               for index, lines, value in zip(written, (lines_a, lines_b), (value_a, value_b))):
            continue  # (not the path's last statement: something after it read the einsum as written)
        for index, lines, env in zip(written, (lines_a, lines_b), (env_a, env_b)):
            _write_einsum_in_order(env, lines, index, name, order, pad)


def _einsum_in_order_wanted(env, lines, name, depth, following):
    """`name = <einsum>` (`context = torch.matmul(probs, value)`) whose next use is a transpose
    (`context.permute(0, 2, 1, 3)`, then a view merging the heads): the einsum is written in the order that makes the
    transpose a relabelling (no Transpose, and no second einsum written for the merge). `env` and `lines` (the
    statement's) are updated in place."""
    value = env.get(name)
    if not (isinstance(value, Value) and isinstance(value.static, EinsumRecipe) and value.is_tensor and
            value.layout == "source" and value.rank is not None):
        return
    order = order_wanted_next(following, name, value.rank)
    if order is None or order == list(range(value.rank)):
        return
    pad = INDENT * depth
    index = _last_code_line(lines)
    if index is None or lines[index] != f"{pad}{name} = {value.static.code()}":
        return
    _write_einsum_in_order(env, lines, index, name, order, pad)


def _write_einsum_in_order(env, lines, index, name, order, pad):
    """Line `index` of `lines` binds `name` to its einsum written in the stored order `order` (torch dims)."""
    recipe = env[name].static
    lines[index] = f"{pad}{name} = {recipe.code(''.join(recipe.output[d] for d in order))}"
    env[name] = tensor(name, env[name].rank).but(layout=layout_of_order(order), dtype=env[name].dtype)


def _assigned_name(statement):
    """The one Name a simple `name = value` statement line binds, else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def _last_code_line(lines):
    """Index of the last line of `lines` that is not a comment or blank (None when there is none)."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() and not lines[index].strip().startswith("#"):
            return index
    return None


def _insert_before_trailing_pass(lines, fix):
    if lines and lines[-1].strip() == "pass":
        lines[-1] = fix
    else:
        lines.append(fix)


def _only_assignments(body):
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        if not all(isinstance(small, (cst.Assign, cst.AugAssign, cst.Pass)) for small in statement.body):
            return False
        for small in statement.body:
            if isinstance(small, cst.Assign) and not all(isinstance(t.target, cst.Name) for t in small.targets):
                return False
    return True


def _rename_assigned(line, label):
    stripped = line.lstrip()
    pad = line[:len(line) - len(stripped)]
    if "=" in stripped and not stripped.startswith("#"):
        name, rest = stripped.split("=", 1)
        name = name.strip().rstrip("+-*/")
        return f"{pad}{name}_{label} = {rest.strip()}" if rest.strip() else line
    return line


__all__ = ["BodyTranslator", "Returned", "python"]


def _masked(subscript):
    """Whether an index of `subscript` is a comparison (a boolean mask: only tensors are indexed by one)."""
    return any(isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Comparison)
               for element in subscript.slice)


def _literals_disagree(value_a, value_b):
    """Whether two paths bind a plain Python value to different literals (a flag set True in one branch)."""
    return isinstance(value_a, Value) and isinstance(value_b, Value) and value_a.kind == value_b.kind == "python" \
        and isinstance(value_a.static, (bool, int, float, str)) and value_a.static != value_b.static


def _unchanged_copies(before, hoisted):
    """(variable, id of its value before a branch) -> the name of the channels-last copy hoisted before the branch:
    a path whose variable still holds that very value can take the copy at the join."""
    return {(name, id(before[name])): copy for (name, layout), copy in hoisted.items()
            if layout == "channels_last" and name in before}


def _no_children(iterable):
    """Whether a loop iterates over the children of a container subclass known to have none
    (`for module in self._modules.values()` in `LambdaReduce`, which every construction builds without children)."""
    return iterable.kind == "module" and iterable.module is not None and iterable.module.kind in ("dict", "list") \
        and not iterable.module.elements and iterable.code.startswith(("self._modules", "self.children()"))


def _list_display(node):
    """Whether `node` makes a new (mutable) list: `[x]`, or `[x] if flag else []` (a list either way)."""
    if isinstance(node, cst.IfExp):
        return _list_display(node.body) and _list_display(node.orelse)
    return isinstance(node, cst.List)


def _heads_of_tokens(value):
    """Whether a permuted tensor a method or function returns as its one return keeps its permute pending for its
    callers: attention heads split off a batch of tokens (rank 4 or more, the batch first); a mask, a bias or a
    matrix is returned as torch makes it (its callers add it to what they hold)."""
    return is_permuted(value) and (value.rank or 0) >= 4 and physical_order(value)[0] == 0


def _conv_kernel(value):
    """Whether a tensor a method returns as its one return is a convolution weight held as the convolution stores
    it (timm's ScaledStdConv2d `get_weight()`: its caller convolves with it)."""
    return value.rank is not None and value.rank >= 3 and value.layout == kernel_layout(value.rank)


def handed_heads(values):
    """The layout of the attention heads a call hands pending (`q.view(b, t, h, d).transpose(1, 2)`), when every
    permuted tensor among `values` is held so; else None."""
    layouts = {v.layout for v in values if isinstance(v, Value) and is_permuted(v)}
    if len(layouts) != 1:
        return None
    held = next(v for v in values if isinstance(v, Value) and is_permuted(v))
    return held.layout if _heads_of_tokens(held) else None


def _einsum_as_handed(value, layout):
    """A returned einsum in torch's order (`torch.matmul(p_attn, value)` of the Annotated Transformer's
    `attention`, handed its heads pending) written in the order the heads were handed instead: the callers take it
    pending as they handed it, and their `x.transpose(1, 2)` merging the heads moves no data. The einsum is one op
    either way (shape_return applies it to the items of a returned tuple)."""
    recipe = value.static if value.is_tensor else None
    order = [int(d) for d in layout.split(":", 1)[1].split(",")]
    if not (isinstance(recipe, EinsumRecipe) and value.layout == "source" and value.code == recipe.code() and
            value.rank == len(order) == len(recipe.output)):
        return value
    stored = EinsumRecipe(recipe.inputs, recipe.operands, "".join(recipe.output[d] for d in order), recipe.env)
    return value.but(code=stored.code(), layout=layout, static=stored)


def _orders_wanted_in(statement, args):
    """{position: stored order} for the arguments of a local function's first call that are einsums (in torch's
    order) whose parameter the function's body first reads through a transpose or permute (T5's
    `unshape(states)`: `states.transpose(1, 2).contiguous().view(...)`): written in the order that makes that
    transpose a relabelling, the einsum moves no data and the body transposes nothing."""
    params = [*statement.params.posonly_params, *statement.params.params]
    held = {}
    for index, (param, value) in enumerate(zip(params, args)):
        if not (value.is_tensor and isinstance(value.static, EinsumRecipe) and value.layout == "source" and
                value.rank is not None):
            continue
        body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else [statement.body]
        order = order_wanted_next(body, param.name.value, value.rank)
        if order is not None and order != list(range(value.rank)):
            held[index] = order
    return held


def _as_parameter(value, name):
    """A caller's Value as the local function's parameter `name`: an einsum's recipe names the caller's operands,
    so the body re-emitting it (to read it in another order) would compute the einsum again, beside the caller's
    (HF T5's `unshape(torch.matmul(attn_weights, value_states))`); the parameter is read as it was handed. A
    number, flag or string the first call hands is not the parameter's for every call (crnn.pytorch's
    `def convRelu(i, ...)` in `__init__`, `nIn = nc if i == 0 else nm[i - 1]`: `i == 0` was decided for every
    call): the one translation serves them all."""
    if isinstance(value.static, EinsumRecipe) or value.kind == "python" and isinstance(
            value.static, (bool, int, float, str)):
        value = value.but(static=None)
    return value.with_code(name)


def _channels_last_either(entering, left):
    """Whether a loop variable entering as one kind and left as the other (an image and a list of images) holds
    channels-last images both ways: each a channels-last image, or a list of such."""
    return all(holds_images(value) or images_held(value) is not None for value in (entering, left))


def _fresh(name, taken):
    while name in taken:
        name += "_"
    return name


def _known_items(value, other):
    """`value`'s items: its own where known, else as many of its element template as `other` has items (a list
    display `feats = [a, b]`, held as alike items a later append may add to)."""
    if value.items is not None:
        return value.items
    template = element_template(value)
    return (template,) * len(other.items) if template is not None and other.items is not None else None


def _images_to_hold(old, new):
    """Whether list `old` holds images alike in torch's layout where list `new` holds them channels-last, of one
    rank, neither's items known."""
    if old.kind != "tuple" or new.kind != "tuple" or old.items is not None or new.items is not None:
        return False
    before, after = element_template(old), images_held(new)
    return before is not None and after is not None and before.is_tensor and before.layout == "source" and \
        before.rank is not None and before.rank == after.rank


def _held_channels_last(value):
    """List `value` (alike items of unknown number) with its items held channels-last."""
    template = element_template(value)
    return value.but(static=("each", template.but(layout="channels_last"))) if template is not None else value
