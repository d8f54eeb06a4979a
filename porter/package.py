"""`porter convert DIR`: every model file of a source package, mirrored under OUT.

`DIR/sub/model.py` -> `OUT/sub/model_keras.py` and its runtime module beside it, each converted the way a single file
is (`porter.convert.convert`): the linker brings the in-package definitions a file uses into its translation, so
layouts are chosen for each whole model. Files are converted dependencies first; a definition of another model file
that translates here exactly as in that file's port (the same specialisations and layouts: a block that runs
channels-last in both) is imported from that port (`blocks_keras = load_port_module(__file__,
"../common/blocks_keras.py")`, porter/codegen/port_loader.py) rather than copied. So that the definitions live in
their own file's port: what other files take from a file is model code of its port even when its own classes do not
use it (`export_names`), a stub in a linked definition names its own file's line, and runtime names a file had to
rename compare as the runtime's. One translated otherwise here (a block that is its own file's top class, taking
torch's layout there, and runs channels-last inside this model; a call its class here knows more about) stays a
copy, and so do helpers of files without module classes. The manifest lists each module's `imports` and `copied`
definitions. Each module loads by file path, from any working directory, with no `sys.path` entry and no
package import; a sibling is loaded once per port under a name unique to its path and text, so two ports never
share one. `porter convert FILE` of a file in a package does the same for the model files it imports from
(`convert_with_siblings`). One
porter-manifest.json lists every converted file (`sources`, the main class's file first); PORTING.md and report.html
cover every file; train_tpu.py, test_equivalence.py and the other per-model outputs are written for the main class
when `--class` names one.

A file porter cannot convert (its own check fails: a porter bug, or a source problem only the translation meets) is
left out, said on stderr, in the manifest's `skipped` and in PORTING.md, and the exit code is 1; usage errors, and a
syntax error in any file, stop the whole conversion before anything is written (exit 2).
"""

import html
import inspect
import os
import re
from pathlib import Path, PurePosixPath

from porter import __version__
from porter.codegen.emit import PortedSibling
from porter.codegen.shared_runtime import share_runtime
from porter.convert import Conversion, ConvertOptions, convert, missing_constructs, module_file_name
from porter.errors import InternalError, SourceError, UsageError
from porter.frontend.linker import source_root
from porter.frontend.source import check_syntax, package_of, parse_source, read_text
from porter.output import MANIFEST, listed_files, manifest_text
from porter.self_check import check_generated

SKIPPED_DIRS = {"__pycache__", "test", "tests", "testing", "build", "dist", "node_modules", "site-packages"}
SKIPPED_FILES = {"setup.py", "conftest.py", "noxfile.py"}
REPORTS = ("PORTING.md", "report.html")
PACKAGE_USAGE_HINT = "--class NAME (or --class sub/file.py:NAME) chooses the main model of a package"


def default_package_out(root):
    """`<DIR name>_keras/` beside DIR (`.` names the working directory)."""
    root = Path(root)
    if root.name in ("", ".", ".."):
        root = _resolved(root)
    return root.parent / f"{root.name}_keras"


def package_files(root, out=None):
    """The .py files under `root` that may hold model code, in path order: no tests, setup scripts, caches,
    hidden folders, virtual environments or earlier porter outputs (a folder with a porter-manifest.json, OUT)."""
    out = _resolved(out) if out is not None else None
    found = []
    for folder, folders, names in os.walk(root):
        folder = Path(folder)
        folders[:] = sorted(name for name in folders if not _skipped_dir(folder / name, name, out))
        for name in sorted(names):
            if name.endswith(".py") and not _skipped_file(name):
                found.append(folder / name)
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


def _skipped_dir(path, name, out):
    if name in SKIPPED_DIRS or name.startswith((".", "test_")):
        return True
    if (path / MANIFEST).is_file() or (path / "pyvenv.cfg").is_file():
        return True
    return out is not None and _resolved(path) == out


def _skipped_file(name):
    stem = name[:-3]
    return name in SKIPPED_FILES or stem.startswith("test_") or stem.endswith("_test") or stem == "tests"


def _resolved(path):
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path).absolute()


class PackageFile:
    """One model file of the package: its path, the path shown in messages, and its own module classes."""

    def __init__(self, path, relative, display, classes, parsed):
        self.path, self.relative, self.display, self.classes = path, relative, display, classes
        self.parsed = parsed  # its SourceFile, handed to `convert` (read once)

    @property
    def module_dir(self):
        parent = PurePosixPath(self.relative).parent.as_posix()
        return "" if parent == "." else parent


def model_files(root, out=None):
    """([PackageFile] of the files under `root` that define torch (or Gluon) module classes themselves, the number
    of Python files looked at, [{"path", "error"}] of files that cannot be read).

    Every readable file is syntax-checked first: one that does not parse is a SourceError at its line (nothing is
    converted). A file porter cannot read (undecodable, too large) or whose classes it cannot take (a class defined
    twice) is left out with its reason."""
    candidates = [path for path in package_files(root, out) if _size(path)]  # an empty __init__.py holds nothing
    found, unreadable, readable = [], [], []
    for path in candidates:
        relative = path.relative_to(root).as_posix()
        display = str(Path(root) / relative)
        try:
            text = read_text(path, display)
        except SourceError as error:
            unreadable.append({"path": relative, "error": _reason(error, display, relative)})
            continue
        check_syntax(text, display)
        readable.append((path, relative, display))
    for path, relative, display in readable:
        if not _may_hold_model(path):
            continue
        try:
            source = parse_source(path, display)
        except SourceError as error:
            unreadable.append({"path": relative, "error": _reason(error, display, relative)})
            continue
        own = [name for name, info in source.classes.items()
               if source.linked_from_line is None or info.line < source.linked_from_line]
        if own:
            found.append(PackageFile(path, relative, display, own, source))
    return found, len(candidates), unreadable


def missing_in_package(root):
    """([(file, line, construct, reason)], [problem lines]) over the model files of the folder `root`: what
    `porter ops --missing` lists for each (files porter cannot read are problems, not a failure of the rest)."""
    files, _, unreadable = model_files(Path(root))
    found, problems = [], [f"{Path(root) / entry['path']}: left out: {entry['error']}" for entry in unreadable]
    for file in files:
        try:
            found.extend((file.display, *use) for use in missing_constructs(file.path))
        except (SourceError, UsageError, InternalError) as error:  # the other files are still listed
            problems.append(f"{file.display}: not converted ({type(error).__name__}): {str(error).splitlines()[0]}")
    return found, problems


def _reason(error, display, relative):
    """The one line of `error` with the file named relative to the package (the manifest holds no absolute path),
    a generated module's name with the folder it goes to."""
    path = relative if error.path is not None and str(error.path) == display else error.path
    folder = PurePosixPath(relative).parent.as_posix()
    if folder != "." and path is not None and "/" not in str(path) and str(path).endswith("_keras.py"):
        path = f"{folder}/{path}"
    return str(type(error)(error.message, path, error.line, error.column, error.hint))


def _size(path):
    try:
        return path.stat().st_size
    except OSError:
        return 1  # reading it says what is wrong


def _may_hold_model(path):
    """A cheap first look: a file without a `class` statement holds no module class (one deriving from a package
    class, `class Net(BaseModel)`, needs no torch name in its own file)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*class\s", text, re.MULTILINE) is not None


def resolve_main(files, requested):
    """(PackageFile, class name) named by `--class NAME` or `--class sub/file.py:NAME`, or (None, None)."""
    if requested is None:
        return None, None
    path_part, _, name = requested.rpartition(":")
    if path_part:
        wanted = PurePosixPath(path_part.replace("\\", "/")).as_posix()
        chosen = [f for f in files if f.relative == wanted] or [f for f in files if f.relative.endswith("/" + wanted)]
        if not chosen:
            raise UsageError(f"--class {requested}: no model file {wanted} in the package",
                             hint=f"model files: {', '.join(f.relative for f in files)}")
        if len(chosen) > 1:
            raise UsageError(f"--class {requested}: {wanted} names several files "
                             f"({', '.join(f.relative for f in chosen)})", hint="give the path from the package root")
        files_with = [f for f in chosen if name in f.classes]
        if not files_with:
            raise UsageError(f"--class {requested}: {chosen[0].relative} defines no module class {name}",
                             hint=f"its classes: {', '.join(chosen[0].classes)}")
        return files_with[0], name
    files_with = [f for f in files if name in f.classes]
    if not files_with:
        known = sorted({c for f in files for c in f.classes})
        raise UsageError(f"--class {name}: no nn.Module subclass of that name in the package",
                         hint=f"classes found: {', '.join(known[:20])}{' ...' if len(known) > 20 else ''}")
    if len(files_with) > 1:
        raise UsageError(f"--class {name}: defined in {', '.join(f.relative for f in files_with)}",
                         hint=f"name the file: --class {files_with[0].relative}:{name}")
    return files_with[0], name


def convert_package(options):
    """Convert every model file under `options.source` (a folder) in memory; returns a Conversion (nothing written).

    The Conversion's translator and emitter are the main file's (None without a main class). A folder without an
    `__init__.py` is a source root: its modules import each other by absolute name (`from models.common import
    Conv`), as when its scripts run from it."""
    root = Path(options.source)
    if (root / "__init__.py").is_file():
        return _convert_package(root, options)
    with source_root(root):
        return _convert_package(root, options)


def _convert_package(root, options):
    out = Path(options.out) if options.out else default_package_out(root)
    files, candidates, unreadable = model_files(root, out)
    if not candidates:
        raise SourceError("is a directory holding no Python files", str(root),
                          hint="porter converts a .py model file, or a folder of them")
    if not files:
        left_out = f"; left out: {unreadable[0]['error']}" if unreadable else ""
        raise SourceError(f"no nn.Module subclass found in its {candidates} Python file(s){left_out}", str(root),
                          hint="porter converts classes deriving from torch.nn.Module")
    main_file, main_class = resolve_main(files, options.class_name)
    if main_file is None:
        given = [flag for flag, value in (("--input-shape", options.input_specs), ("--init-args", options.init_args),
                                          ("--weights", options.weights), ("--train-script", options.train_script),
                                          ("--channels-last-io", options.channels_last_io)) if value]
        if given:
            raise UsageError(f"{given[0]} applies to the main class: name it with --class", str(root),
                             hint=PACKAGE_USAGE_HINT)
    skipped, failures = list(unreadable), []
    conversions, warnings = [], [f"{Path(root) / item['path']}: not converted: {item['error']}" for item in skipped]
    siblings = {}  # source file (resolved) -> PortedSibling of each module made so far
    export_names(files)
    for file in dependencies_first(files):
        is_main = file is main_file
        file_options = ConvertOptions(
            file.path, out, main_class if is_main else None, options.input_specs if is_main else [],
            options.init_args if is_main else {}, None, options.force, options.train_script if is_main else None,
            options.channels_last_io if is_main else False, module_dir=file.module_dir, reports_only=not is_main,
            parsed=file.parsed, siblings=siblings)
        file.parsed = None  # a conversion may change it; the memory goes with it
        try:
            conversion = convert(file_options)
        except (InternalError, SourceError) as error:
            if is_main:
                raise
            failures.append(error)
            skipped.append({"path": file.relative, "error": _reason(error, file.display, file.relative)})
            warnings.append(f"{file.display}: not converted: {error}")
            continue
        conversions.append((file, conversion))
        module = conversion.manifest["sources"][0]["module"]
        siblings[_resolved(file.path)] = PortedSibling(module, file.relative, conversion.emitter.own_chunks)
        unknown_inputs = f"{file.display}: example inputs of "  # only the main class needs them (verify, training)
        warnings.extend(w for w in conversion.warnings if is_main or not w.startswith(unknown_inputs))
    if not conversions:
        raise failures[0]
    conversions.sort(key=lambda item: (item[0] is not main_file, item[0].relative))
    package_files_out = {}
    for file, conversion in conversions:
        for name, text in conversion.files.items():
            if name in REPORTS or name == MANIFEST:
                continue
            if file is not main_file and not _is_module(name, file):
                continue
            if name in package_files_out:
                raise InternalError(f"two files of the package would write {name}", str(root))
            package_files_out[name] = text
    package_files_out = _one_runtime(package_files_out, [c for _, c in conversions])
    source_root_path = None if (root / "__init__.py").is_file() else _relative_posix(root, out)
    if "test_equivalence.py" in package_files_out:
        package_files_out["test_equivalence.py"] = with_package_import(package_files_out["test_equivalence.py"],
                                                                       source_root_path)
        check_generated({"test_equivalence.py": package_files_out["test_equivalence.py"]})
    manifest = package_manifest(conversions, main_file, main_class, options, skipped)
    if source_root_path is not None:
        manifest["source_root"] = source_root_path  # modules import each other from it (`from models.common ...`)
    package_files_out["PORTING.md"] = porting_md(root, conversions, manifest, skipped)
    package_files_out["report.html"] = report_html(root, conversions, manifest, skipped)
    manifest["files"] = listed_files(package_files_out)
    package_files_out[MANIFEST] = manifest_text(manifest)  # every module passed porter's self-check in `convert`
    stubbed = skipped or any(c.exit_code for _, c in conversions)
    main_conversion = next((c for f, c in conversions if f is main_file), None)
    return Conversion(package_files_out, manifest, warnings, 1 if stubbed else 0,
                      main_conversion.translator if main_conversion else None,
                      main_conversion.emitter if main_conversion else None, main_class,
                      main_conversion.model_factory if main_conversion else None)


def convert_with_siblings(options):
    """`porter convert FILE` (in memory): a file of a package that takes definitions from other model files of it
    (`from ..common.blocks import ConvBNReLU`) gets those files converted too, mirrored under OUT by their path
    from the top package folder (OUT/common/blocks_keras.py beside OUT/net_keras.py), dependencies first, and
    imports from their ports what they hold translated as it needs them; the manifest lists them after the file's
    own entry. A file importing no model file of its package converts as before."""
    source_path = Path(options.source)
    source = options.parsed or parse_source(source_path, str(options.source))
    options.parsed = source
    top = _top_package_folder(source_path)
    siblings = _imported_model_files(source, top) if top is not None else []
    own_module = module_file_name(source_path)
    siblings = [f for f in siblings if _module_path(f) not in (own_module, own_module[:-3] + "_runtime.py")]
    if not siblings:
        return convert(options)
    ported, made = {}, []
    export_names(siblings, source)
    for file in dependencies_first(siblings):
        file_options = ConvertOptions(file.path, options.out, module_dir=file.module_dir, reports_only=True,
                                      parsed=file.parsed, siblings=ported, force=options.force)
        file.parsed = None
        try:
            conversion = convert(file_options)
        except (InternalError, SourceError):
            continue  # its definitions stay copies in the modules that use them
        ported[_resolved(file.path)] = PortedSibling(_module_path(file), file.relative,
                                                     conversion.emitter.own_chunks)
        made.append((file, conversion))
    options.siblings = ported
    main = convert(options)
    used = {sibling.module for sibling in _imported_closure(main.emitter, made)}
    made = [(file, conversion) for file, conversion in made if _module_path(file) in used]
    if not made:
        return main
    files = dict(main.files)
    manifest = dict(main.manifest)
    sources = [_with_imports(dict(manifest["sources"][0]), main.emitter)]
    for file, conversion in made:
        for name, text in conversion.files.items():
            if _is_module(name, file):
                files[name] = text
        entry = _with_imports(dict(conversion.manifest["sources"][0]), conversion.emitter)
        entry["classes"] = [c for c in entry["classes"] if c["name"] in file.classes]
        sources.append(entry)
    manifest["sources"] = sources
    files = _one_runtime(files, [main] + [conversion for _, conversion in made])
    files["PORTING.md"] = files["PORTING.md"].rstrip("\n") + "\n\n" + _siblings_section(sources)
    manifest["files"] = listed_files(files)
    files[MANIFEST] = manifest_text(manifest)
    stubbed = main.exit_code or any(c.exit_code for _, c in made)
    return Conversion(files, manifest, main.warnings, 1 if stubbed else 0, main.translator, main.emitter,
                      main.main_class, main.model_factory)


def _one_runtime(files, conversions):
    """`files` with one runtime module shared by the model modules of `conversions` (the main one first;
    porter.codegen.shared_runtime), the modules it rewrote checked as every generated file is."""
    modules = [conversion.manifest["sources"][0]["module"] for conversion in conversions]
    names = {module: conversion.emitter.runtime_names for module, conversion in zip(modules, conversions)}
    shared = share_runtime(files, modules, names)
    check_generated({name: text for name, text in shared.items() if text is not files.get(name)})
    return shared


def _siblings_section(sources):
    """PORTING.md's account of the package files converted beside a single file's port."""
    lines = ["## Files of the package ported beside it", "",
             "The model files this file takes definitions from are converted too, mirrored by their path in the "
             "package; a module imports from their ports (by path: `load_port_module`) what they hold translated as "
             "it needs it, and keeps a copy of what it uses otherwise (another layout or specialisation).", "",
             "| Keras module | source | imports | copies | stubs |", "|---|---|---|---|---:|"]
    for entry in sources:
        imports = "; ".join(f"{', '.join(item['names'])} from `{item['module']}`" for item in entry["imports"])
        copies = ", ".join(sorted({item["name"] for item in entry["copied"]}))
        lines.append(f"| `{entry['module']}` | `{entry['path']}` | {imports or '-'} | {copies or '-'} | "
                     f"{_stub_count(entry)} |")
    total = sum(_stub_count(entry) for entry in sources)
    if total:  # what `porter convert` prints: each stub once, in the module whose code holds it
        lines += ["", f"Stubs in all the modules written: {total}."]
    return "\n".join(lines) + "\n"


def _stub_count(entry):
    """The stubs of a manifest `sources` entry (its classes' unsupported constructs)."""
    return sum(len(c["unsupported"]) for c in entry["classes"])


def _imported_closure(emitter, made):
    """The PortedSiblings `emitter`'s module imports, and those they import in turn."""
    emitters = {_module_path(file): conversion.emitter for file, conversion in made}
    found, stack = set(), list(emitter.imported)
    while stack:
        sibling = stack.pop()
        if sibling in found:
            continue
        found.add(sibling)
        stack.extend(emitters[sibling.module].imported if sibling.module in emitters else ())
    return found


def _top_package_folder(path):
    """The folder of the top package holding `path` (None for a loose file)."""
    package = package_of(path)
    if not package:
        return None
    folder = _resolved(path).parent
    for _ in package.split(".")[1:]:
        folder = folder.parent
    return folder


def _imported_model_files(source, top):
    """[PackageFile] of the files under `top` that `source`'s linked definitions come from, and theirs in turn,
    that define module classes of their own."""
    found, stack, seen = [], sorted(set(source.linked_origins.values())), set()
    while stack:
        path = stack.pop()
        if path in seen or top not in path.parents:
            continue
        seen.add(path)
        relative = path.relative_to(top).as_posix()
        try:
            parsed = parse_source(path, relative)
        except SourceError:
            continue
        own = [name for name, info in parsed.classes.items()
               if parsed.linked_from_line is None or info.line < parsed.linked_from_line]
        if own:
            found.append(PackageFile(path, relative, relative, own, parsed))
        stack.extend(sorted(set(parsed.linked_origins.values())))
    return sorted(found, key=lambda f: f.relative)


def _module_path(file):
    """The POSIX path under OUT of `file`'s mirrored model module."""
    module = module_file_name(file.path)
    return f"{file.module_dir}/{module}" if file.module_dir else module


def _with_imports(entry, emitter):
    """A manifest `sources` entry with what its module imports from its siblings' ports and the copies it keeps."""
    entry["imports"] = [{"module": sibling.module, "source": sibling.source, "names": list(names)}
                        for sibling, names in sorted(emitter.imported.items(), key=lambda i: i[0].module)]
    entry["copied"] = [{"name": name, "source": source} for name, source in emitter.copied]
    return entry


def export_names(files, *importers):
    """Mark in each file's SourceFile the names the other files (and `importers`, SourceFiles) link from it: its port
    translates them as model code, so they live there and the others import them rather than keep copies."""
    by_path = {_resolved(file.path): file for file in files if file.parsed is not None}
    exported = {}
    for source in [file.parsed for file in files if file.parsed is not None] + list(importers):
        for name, origin in source.linked_origins.items():
            if origin in by_path and by_path[origin].parsed is not source:
                exported.setdefault(origin, set()).add(source.linked_home_names.get(name, name))
    for origin, names in exported.items():
        parsed = by_path[origin].parsed
        parsed.exported = frozenset(names)
        parsed.__dict__.pop("model_names", None)  # computed again with them


def dependencies_first(files):
    """The package's model files, each after the files it takes definitions from (its linked definitions' origins),
    otherwise in path order: a module imports only from the ports made before it, so no two import each other."""
    by_path = {_resolved(file.path): file for file in files}
    placed, order = set(), []

    def place(file, open_):
        if file.relative in placed or file.relative in open_:
            return  # a cycle: the file met first is made first, the other keeps copies of what it takes from it
        open_.add(file.relative)
        origins = set(file.parsed.linked_origins.values()) if file.parsed is not None else set()
        for needed in sorted((by_path[origin] for origin in origins if origin in by_path),
                             key=lambda f: f.relative):
            place(needed, open_)
        placed.add(file.relative)
        order.append(file)

    for file in files:
        place(file, set())
    return order


TESTS_MARKER = "# --- the tests ---"


def with_package_import(text, source_root_path=None):
    """test_equivalence.py whose `import_path` imports a source file of a package as part of it (its relative
    imports fail when it is loaded by path alone), or with the source root on sys.path (`source_root_path`, relative
    to OUT): porter.verify.package_import's functions, copied in."""
    from porter.verify import package_import

    if TESTS_MARKER not in text:
        return text
    roots = "" if source_root_path is None else (
        f", [os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), {source_root_path!r}))]")
    shim = "\n\n\n".join(inspect.getsource(function).strip("\n") for function in (
        package_import.import_in_package, package_import.with_package_fallback))
    block = (f"# --- a source file of a package is imported as part of it (porter/verify/package_import.py) ---\n\n"
             f"{shim}\n\n\nimport_path = with_package_fallback(import_path{roots})\n\n\n")
    return text.replace(TESTS_MARKER, block + TESTS_MARKER, 1)


def _relative_posix(path, start):
    try:
        return PurePosixPath(Path(os.path.relpath(_resolved(path), _resolved(start)))).as_posix()
    except ValueError:  # another drive
        return None


def _is_module(name, file):
    """Whether output `name` is the mirrored model module of `file` or its runtime module."""
    module = module_file_name(file.path)
    prefix = f"{file.module_dir}/" if file.module_dir else ""
    return name in (prefix + module, prefix + module[:-3] + "_runtime.py")


def package_manifest(conversions, main_file, main_class, options, skipped):
    """One manifest: the sources entries of every file (the main class's file first, then by path)."""
    sources = []
    for file, conversion in conversions:
        entry = dict(conversion.manifest["sources"][0])
        entry["classes"] = [c for c in entry["classes"] if c["name"] in file.classes]  # not the linked copies
        sources.append(_with_imports(entry, conversion.emitter))
    main_conversion = next((c for f, c in conversions if f is main_file), None)
    manifest = {"porter_version": __version__, "sources": sources, "main_class": main_class,
                "init_args": (options.init_args or {}) if main_class else {}, "files": [],
                "channels_last_io": bool(options.channels_last_io) if main_class else False}
    if main_conversion is not None:  # anything the main file's outputs recorded beyond the common keys
        for key, value in main_conversion.manifest.items():
            manifest.setdefault(key, value)
    manifest["skipped"] = skipped
    return manifest


def porting_md(root, conversions, manifest, skipped):
    """PORTING.md of a package: a table of the files, the files left out, then each file's report."""
    name = _root_name(root)
    main = manifest["main_class"]
    lines = [f"# Porting report: package `{name}/`", "",
             f"porter {__version__} · {len(conversions)} model files converted"
             + (f", {len(skipped)} left out" if skipped else "")
             + (f" · main class `{main}` in `{manifest['sources'][0]['module']}`" if main else
                " · no main class (`porter convert DIR --class NAME` names one: train_tpu.py and the equivalence "
                "tests are written for it)") + " · the same report as a page: `report.html`",
            "", "| source | Keras module | classes | stubs |", "|---|---|---|---:|"]
    for (file, conversion), entry in zip(conversions, manifest["sources"], strict=True):
        stubs = _stub_count(entry)
        classes = ", ".join(f"`{c['name']}`" + (" (main)" if c["name"] == main and entry is manifest["sources"][0]
                                                 else "") for c in entry["classes"])
        lines.append(f"| `{file.relative}` | `{entry['module']}` | {classes} | {stubs} |")
    lines.append("")
    imported = sum(len(item["names"]) for entry in manifest["sources"] for item in entry.get("imports", []))
    copied = sum(len(entry.get("copied", [])) for entry in manifest["sources"])
    lines.append(f"Definitions a module takes from other model files of the package: {imported} imported from their "
                 f"ports (translated the same way there), {copied} copied (translated for other layouts or "
                 f"specialisations here); helpers of files without module classes are carried over. Every module "
                 f"loads by file path.")
    if skipped:
        lines += ["", "## Files left out", ""]
        lines += [f"- `{item['path']}`: {item['error']}" for item in skipped]
    for file, conversion in conversions:
        section = _import_advice(conversion.files["PORTING.md"], file)
        lines += ["", "---", "", *_demoted(section).rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def _import_advice(text, file):
    """A file's report with its loading advice for a module in OUT/sub: `from model_keras import Net  # with OUT/sub
    on sys.path`, not the single-file `from sub/model_keras import ...`."""
    if not file.module_dir:
        return text
    stem = module_file_name(file.path)[:-3]
    qualified = f"{file.module_dir}/{stem}"
    text = text.replace(f"from {qualified} import ", f"from {stem} import ")
    text = text.replace(f"{qualified}.load_state_dict(", f"{stem}.load_state_dict(")
    return text.replace("# with OUT on sys.path", f"# with OUT/{file.module_dir} on sys.path")


def _demoted(markdown):
    """Every heading one level deeper (code blocks left alone): a file's report as a section of the package's."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if not fenced and re.match(r"#{1,5} ", line) else line)
    return "\n".join(lines)


def report_html(root, conversions, manifest, skipped):
    """report.html of a package: one page, a table of the files, then each file's report (its ids prefixed)."""
    first = conversions[0][1].files["report.html"]
    head = first[first.index("<head>") + len("<head>"):first.index("</head>")]
    name = html.escape(_root_name(root))
    head = re.sub(r"<title>.*?</title>", f"<title>Porting report: package {name}/</title>", head, flags=re.DOTALL)
    main = manifest["main_class"]
    rows = []
    for index, ((file, _), entry) in enumerate(zip(conversions, manifest["sources"], strict=True)):
        stubs = _stub_count(entry)
        classes = ", ".join(f"<code>{html.escape(c['name'])}</code>" for c in entry["classes"])
        rows.append(f"<tr><td><a href=\"#file-{index}\"><code>{html.escape(file.relative)}</code></a></td>"
                    f"<td><code>{html.escape(entry['module'])}</code></td><td>{classes}</td><td>{stubs}</td></tr>")
    parts = ["<!DOCTYPE html>", '<html lang="en">', f"<head>{head}</head>", "<body>", '<header class="page">',
             f"<h1>Porting report: package <code>{name}/</code></h1>",
             f"<p class=\"meta\">porter {__version__} · {len(conversions)} model files converted"
             + (f", {len(skipped)} left out" if skipped else "")
             + (f" · main class <code>{html.escape(main)}</code>" if main else " · no main class") + "</p>",
             "</header>", '<section id="files">', "<h2>Files</h2>",
             "<table><thead><tr><th>source</th><th>Keras module</th><th>classes</th><th>stubs</th></tr></thead>",
             "<tbody>", *rows, "</tbody></table>"]
    if skipped:
        parts += ["<h3>Files left out</h3>", "<ul>"]
        parts += [f"<li><code>{html.escape(item['path'])}</code>: {html.escape(item['error'])}</li>"
                  for item in skipped]
        parts.append("</ul>")
    parts.append("</section>")
    for index, (file, conversion) in enumerate(conversions):
        page = _import_advice(conversion.files["report.html"], file)
        body = page[page.index("<body>") + len("<body>"):page.rindex("</body>")]
        body = re.sub(r'\bid="([^"]*)"', rf'id="file-{index}-\1"', body)
        body = re.sub(r'\bhref="#([^"]*)"', rf'href="#file-{index}-\1"', body)
        parts += [f'<article class="package-file" id="file-{index}">', body.strip("\n"), "</article>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _root_name(root):
    return _resolved(root).name


def weights_view(conversion):
    """The package Conversion as the weights step reads a single file's: the main module and its runtime at the top
    level (the step imports the generated module from a scratch folder); the same texts, so the same fingerprint."""
    if conversion.main_class is None:
        return conversion
    module = conversion.manifest["sources"][0]["module"]
    if "/" not in module or conversion.manifest["sources"][0].get("imports"):
        return conversion  # at the top level, its relative paths to the siblings it imports would miss them
    runtime = module[:-3] + "_runtime.py"
    files = {**conversion.files, PurePosixPath(module).name: conversion.files[module],
             PurePosixPath(runtime).name: conversion.files[runtime]}
    manifest = {**conversion.manifest, "sources": [{**conversion.manifest["sources"][0],
                                                    "module": PurePosixPath(module).name}]}
    return Conversion(files, manifest, conversion.warnings, conversion.exit_code, conversion.translator,
                      conversion.emitter, conversion.main_class, conversion.model_factory)

