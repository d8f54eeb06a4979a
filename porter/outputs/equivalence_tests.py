"""OUT/test_equivalence.py: pytest + hypothesis equivalence tests that run without porter installed.

The tests use the same checks as `porter verify` (porter/verify: strategies, harness, checks, localise). Like the
runtime in the model module, the definitions they need are copied into the file (only those, dependency-closed,
in a fixed order), so the port can be re-checked wherever it is kept, and a newer porter does not change what an
existing test checks. Nothing in the file depends on OUT's location: the source path is read from
porter-manifest.json (relative to OUT) or $PORTER_SOURCE.

For MXNet Gluon sources the file carries porter/verify/gluon_checks.py's definitions instead of the torch ones, and
mxnet_driver.py as a string: the reference runs in an mxnet 1.9.1 interpreter ($PORTER_MXNET_PYTHON or the nearest
.venv-mxnet), and the file imports neither porter nor torch.
"""

import ast
import functools
import hashlib
from pathlib import Path

from porter import __version__
from porter.codegen.emit import environment, format_code

VERIFY_DIR = Path(__file__).resolve().parents[1] / "verify"
SUPPORT_MODULES = ("compare", "torch_bridge", "harness", "strategies", "checks", "localise", "gluon_checks")
SUPPORT_ROOTS = ("PortedPair", "Equivalence", "EquivalenceFailure", "Case", "failure_report")
GLUON_SUPPORT_ROOTS = ("GluonPair", "GluonEquivalence", "EquivalenceFailure", "Case", "MxnetReferenceError",
                       "drawn_gluon_cases", "gluon_failure_report", "mxnet_interpreter_problem", "MXNET_VERSION",
                       "MXNET_PYTHON_VARIABLE")
MXNET_DRIVER = VERIFY_DIR / "mxnet_driver.py"
DEFAULT_EXAMPLES = 10


class SupportDefinition:
    def __init__(self, name, order, source, uses, imports):
        self.name, self.order, self.source, self.uses, self.imports = name, order, source, uses, imports


@functools.lru_cache(maxsize=1)
def support_index():
    """name -> SupportDefinition for the top-level definitions of the support modules (with their imports)."""
    from porter.cache_folder import installation_kind, read_cached, write_cached

    # the same few thousand lines parsed and walked on every conversion: kept in porter's cache folder under a hash
    # of their text (a tenth of a second of a small file's conversion)
    texts = [(VERIFY_DIR / f"{stem}.py").read_text() for stem in SUPPORT_MODULES]
    kind = installation_kind("test-support-index", VERIFY_DIR)
    key = hashlib.sha256(repr(list(zip(SUPPORT_MODULES, texts, strict=True))).encode()).hexdigest()[:32]
    entries = read_cached(kind, key)
    if not (isinstance(entries, list) and all(isinstance(e, tuple) and len(e) == 5 for e in entries)):
        entries = [(d.name, d.order, d.source, d.uses, d.imports) for d in _support_definitions(texts)]
        write_cached(kind, key, entries)
    return {entry[0]: SupportDefinition(*entry) for entry in entries}


def _support_definitions(texts):
    """The SupportDefinitions of the support modules' texts, in order."""
    index = {}
    for rank, (stem, text) in enumerate(zip(SUPPORT_MODULES, texts, strict=True)):
        tree = ast.parse(text)
        segment_of = _segments(text)
        imports = []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                segment = segment_of(node)
                if not _is_porter_import(node):
                    imports.append(segment)
        for position, node in enumerate(tree.body):
            names = _defined_names(node)
            if not names:
                continue
            decorators = "".join(f"@{segment_of(d)}\n" for d in getattr(node, "decorator_list", []))
            source = decorators + segment_of(node)
            uses = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            uses |= {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(
                n.value, ast.Name)}
            for name in names:
                if name in index:
                    raise RuntimeError(f"porter/verify/{stem}.py: {name} is defined twice in the support modules")
                index[name] = SupportDefinition(name, (rank, position), source, uses - {name}, imports)
    return list(index.values())


def _segments(text):
    """segment_of(node): the source of an ast node, as ast.get_source_segment gives it, with the line offsets
    computed once (get_source_segment splits the whole text on every call)."""
    encoded = text.encode()
    starts = [0]
    for line in encoded.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def segment_of(node):
        start = starts[node.lineno - 1] + node.col_offset  # ast offsets are UTF-8 byte offsets
        end = starts[node.end_lineno - 1] + node.end_col_offset
        return encoded[start:end].decode()

    return segment_of


def _is_porter_import(node):
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "porter"
    return any(alias.name.split(".")[0] == "porter" for alias in node.names)


def _defined_names(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def support_code(roots=SUPPORT_ROOTS, without=()):
    """(import lines, definitions text) of everything `roots` need from porter/verify; imports of the modules in
    `without` are left out (their names appear only in text: messages that mention torch)."""
    index = support_index()
    needed, stack = set(), list(roots)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        stack.extend(u for u in index[name].uses if u in index and u not in needed)
    definitions = sorted((index[name] for name in needed), key=lambda d: d.order)
    chunks, seen = [], set()
    for definition in definitions:
        if definition.source not in seen:
            seen.add(definition.source)
            chunks.append(definition.source)
    used_text = "\n".join(chunks)
    # the definitions of one module share its import lines: each line is looked for once, not once per definition
    candidates = {line for definition in definitions for line in definition.imports}
    imports = {line for line in candidates if _import_used(line, used_text)}
    imports.discard("import os")  # the template imports it first, to quiet TensorFlow before its import
    imports = {line for line in imports if line.split()[1].split(".")[0] not in without}
    return sorted(imports, key=_import_order), "\n\n\n".join(chunks)


THIRD_PARTY = ("numpy", "torch", "tensorflow", "keras", "hypothesis")


def _import_order(line):
    module = line.split()[1].split(".")[0]
    return module in THIRD_PARTY, line.startswith("from"), module, line


def _import_used(line, text):
    import re

    node = ast.parse(line).body[0]
    names = [alias.asname or alias.name.split(".")[0] for alias in node.names]
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", text) for name in names)


def produce(source, ctx, manifest, options):
    entry = manifest["sources"][0]
    framework = entry.get("framework", "torch")
    classes = [c["name"] for c in entry["classes"] if c.get("example_inputs")]
    main = manifest.get("main_class")
    classes.sort(key=lambda name: name != main)
    extra = {}
    if framework == "mxnet":
        imports, support = support_code(GLUON_SUPPORT_ROOTS, without=("torch",))
        extra = {"driver": gluon_driver_text(), "mxnet_version": "1.9.1"}
    else:
        imports, support = support_code()
    text = environment().get_template("test_equivalence.py.j2").render(
        version=__version__, source_path=entry["path"], source_name=Path(entry["path"]).name,
        module=entry["module"], main_class=main, classes=classes, examples=DEFAULT_EXAMPLES,
        imports=imports, support=support, framework=framework, **extra)
    return {"test_equivalence.py": format_code(text)}


def gluon_driver_text():
    """mxnet_driver.py as the text of a raw triple-single-quoted string in the generated test."""
    text = MXNET_DRIVER.read_text()
    if "'''" in text or text.rstrip().endswith("\\"):
        raise RuntimeError("porter/verify/mxnet_driver.py must not contain ''' or end in a backslash: the generated "
                           "test_equivalence.py embeds it in a raw '''string'''")
    return text.rstrip("\n") + "\n"
