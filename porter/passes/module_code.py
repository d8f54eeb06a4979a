"""Module-level assignments the model uses that compute with torch (`MEAN = torch.tensor([...]).view(1, 3, 1, 1)`,
`EPS = torch.finfo(torch.float32).eps`): translated like function bodies, in torch's layout, instead of copied.

The translated Values are what the class translators see for those names (`x - MEAN` on a channels-last `x`
broadcasts MEAN in that layout); the code replaces the source statement in the model module.
"""

import libcst as cst

from porter.frontend.imports import mentions_torch
from porter.frontend.library_idioms import alias_assignment
from porter.frontend.names import assigned_names
from porter.ir.layout import to_layout


def translate_module_assignments(file_translator, body_translator_class):
    """{statement: translated code} for the top-level assignments of model names that mention torch; their Values
    go into ctx.module_values."""
    source, ctx = file_translator.source, file_translator.ctx
    translated = {}
    for statement in source.module.body:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if not isinstance(small, cst.Assign) or not mentions_torch(small.value, source.imports):
            continue
        if alias_assignment(small, source.imports) is not None and \
                small.targets[0].target.value in source.imports.aliases:
            continue  # `concat = torch.cat`: an import alias (frontend/library_idioms.py), not carried over
        names = assigned_names(statement)
        if not names or not any(name in source.model_names for name in names):
            continue
        translator = body_translator_class(file_translator, None, "function", {}, None)
        translator.line = source.line_of(statement)
        value = translator.expr(small.value)
        if value.is_tensor:
            value = to_layout(ctx, value, "source")
        targets = " = ".join(source.code_of(t.target).strip() for t in small.targets)
        translated[statement] = f"{targets} = {value.code}"
        if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            ctx.module_values[names[0]] = value.with_code(names[0])
    return translated


# class-level names TorchScript reads (type declarations and constants for the scripting compiler), nothing else
TORCHSCRIPT_METADATA = {"__annotations__", "__constants__", "__jit_unused_properties__", "__jit_ignored_attributes__"}


def translate_class_statements(file_translator, body_translator_class):
    """{class-level statement of a module class: its code in the port}: TorchScript metadata and bare annotations
    (`cell_anchors: List[torch.Tensor]`) go ('': dropped), an annotated value keeps its value (`norm: Callable[...,
    nn.Module] = nn.BatchNorm2d` -> `norm = <translated>`), a value computed with torch is translated. Statements
    not listed are copied as they are."""
    source, ctx = file_translator.source, file_translator.ctx
    translated = {}
    for info in source.classes.values():
        ctx.current.append(ctx.ir_for(info))  # what cannot be translated is the class's stub
        try:
            translated.update(_class_statements(file_translator, body_translator_class, info))
        finally:
            ctx.current.pop()
    return translated


def _class_statements(file_translator, body_translator_class, info):
    source = file_translator.source
    translated = {}
    for statement in info.node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign):
            target, value = small.target, small.value
        else:
            continue
        name = target.value if isinstance(target, cst.Name) else None
        if name in TORCHSCRIPT_METADATA or value is None:
            translated[statement] = ""
        elif name in info.methods and isinstance(value, cst.Name) and name not in info.class_attributes:
            translated[statement] = ""  # `forward = _forward_impl`: the method is ported under that name too
        elif mentions_torch(value, source.imports):
            translator = body_translator_class(file_translator, None, "function", {}, None)
            translator.line = source.line_of(statement)
            code = translator.expr(value)
            if code.is_tensor:
                code = to_layout(file_translator.ctx, code, "source")
            translated[statement] = f"{source.code_of(target).strip()} = {code.code}"
        elif isinstance(small, cst.AnnAssign):
            translated[statement] = f"{source.code_of(target).strip()} = {source.code_of(value).strip()}"
    return translated
