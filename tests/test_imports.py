"""porter's import structure: no cycles (function-level imports included), rules never import passes (they import
only porter.ir and porter.rules), codegen never imports passes.

Reads every module under porter/ with `ast` (nothing is imported), resolves each `import`/`from ... import` found
anywhere in the module (top level, functions, classes, conditionals) to the porter modules it loads, and checks the
resulting graph.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "porter"

# (importing package, imported package): edges the design forbids, with why.
FORBIDDEN = [
    ("porter.rules", "porter.passes", "rules see a narrow context API, never the translator's passes"),
    ("porter.codegen", "porter.passes", "translation is done before codegen gets the result"),
]
# (importing package, the only porter packages it may import, why): stricter than FORBIDDEN, for the packages whose
# dependencies are a contract
ALLOWED = [
    ("porter.rules", ("porter.rules", "porter.ir"), "a rule sees the IR's values and its RuleContext "
     "(porter/rules/context.py), nothing of the pipeline around it"),
]


def module_name(path):
    """porter/passes/calls.py -> porter.passes.calls; porter/rules/__init__.py -> porter.rules."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def porter_modules():
    """{module name: path} of every Python module under porter/."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts}


def resolve(imported, known):
    """The porter module `imported` (a dotted name) loads: itself, or its nearest enclosing known module."""
    parts = imported.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def imports_of(name, path, known):
    """{(imported porter module, line)} for every import statement anywhere in the module `name`."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: anchor at this module's package
                anchor = name.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            # `from porter.passes import layout` loads the module porter.passes.layout when there is one
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            module = resolve(target, known)
            if module is not None and module != name:
                found.add((module, node.lineno))
    return found


def import_graph():
    """{module: {imported module: first line}} over porter/."""
    known = porter_modules()
    graph = {}
    for name, path in known.items():
        edges = graph.setdefault(name, {})
        for target, line in sorted(imports_of(name, path, known)):
            edges.setdefault(target, line)
    return graph


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan), each sorted; deterministic order."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(components)


def describe(graph, component):
    """The import edges inside one cycle, as `a -> b (line n)` lines."""
    members = set(component)
    return "\n".join(f"  {source} -> {target} (line {line})" for source in component
                     for target, line in sorted(graph[source].items()) if target in members)


def within(module, package):
    return module == package or module.startswith(package + ".")


def test_graph_sees_function_level_and_relative_imports(tmp_path):
    """The walker must find imports inside functions, else the cycle test below proves nothing."""
    path = tmp_path / "fake.py"
    path.write_text("import porter.errors\n\ndef later():\n    from porter.frontend import source\n"
                    "    from .calls import CallTranslator\n")
    known = {"porter.errors", "porter.frontend.source", "porter.passes.calls", "porter.passes.fake"}
    assert {target for target, _ in imports_of("porter.passes.fake", path, known)} == {
        "porter.errors", "porter.frontend.source", "porter.passes.calls"}


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles in porter/ (function-level imports count):\n" + "\n\n".join(
        describe(graph, component) for component in found)


@pytest.mark.parametrize("importer, imported, why", FORBIDDEN, ids=[f"{a}->{b}" for a, b, _ in FORBIDDEN])
def test_forbidden_imports(importer, imported, why):
    graph = import_graph()
    offenders = [f"  {source} -> {target} (line {line})" for source, edges in sorted(graph.items())
                 if within(source, importer) for target, line in sorted(edges.items()) if within(target, imported)]
    assert not offenders, f"{importer} must not import {imported} ({why}):\n" + "\n".join(offenders)


@pytest.mark.parametrize("importer, allowed, why", ALLOWED, ids=[a for a, _, _ in ALLOWED])
def test_allowed_imports(importer, allowed, why):
    graph = import_graph()
    offenders = [f"  {source} -> {target} (line {line})" for source, edges in sorted(graph.items())
                 if within(source, importer) for target, line in sorted(edges.items())
                 if not any(within(target, package) for package in allowed)]
    assert not offenders, f"{importer} may import only {', '.join(allowed)} ({why}):\n" + "\n".join(offenders)
