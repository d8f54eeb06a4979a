"""`porter verify OUT`: property-based equivalence of a port with its source, with layer-by-layer localisation.

For each class with example inputs (the main class unless --class says otherwise) it builds the torch source and
the Keras port with the recorded constructor arguments, moves parameters and normalisation statistics off their
defaults, copies the weights through the generated load_state_dict and runs the checks of porter.verify.checks
on hypothesis-drawn cases. A Gluon source runs in real mxnet 1.9.1 in its own interpreter (porter.verify.gluon_checks:
the parameters it saves with save_parameters are what the port loads; the drawn cases go to mxnet together). It prints a table per class (the source's other classes get a row from the submodule
capture of the main model) and, on a mismatch, the first diverging submodule with its source file:line and a
command that reproduces the failing case. Exit 0: all equal; 1: a mismatch; 2: usage (no example inputs, ...).
"""

import contextlib
import os
import shlex
import sys
import time
from pathlib import Path

from porter.errors import UsageError

COMMAND = "verify"
DEFAULT_EXAMPLES = 20
PRECISIONS = ("float32", "mixed_bfloat16")
BF16_LOCALISATION_TOLERANCE = 5e-2
EXIT_EQUAL, EXIT_MISMATCH = 0, 1


def add_parser(subparsers):
    parser = subparsers.add_parser(
        COMMAND, help="check a port against its source on drawn inputs, localising any difference",
        description="Build the source model and its Keras port from OUT (porter-manifest.json), copy perturbed "
                    "weights through the generated load_state_dict and compare them on hypothesis-drawn inputs: "
                    "batch sizes 1..8, values N(0,1)*10^k (k in [-3, 3] plus jitter), the spatial sizes / "
                    "sequence lengths the source accepts, integers within the Embedding range. Checks eval-mode "
                    "outputs (1e-4 of the output's scale), gradients w.r.t. inputs and every parameter (1e-3 of "
                    "each tensor's max) and, with BatchNorm, one training step (outputs and running statistics). "
                    "On a mismatch the first diverging submodule is named with its source file:line. The source "
                    "is imported from the manifest's path, or from $PORTER_SOURCE. MXNet Gluon sources run in "
                    "real mxnet 1.9.1 (.venv-mxnet, made by scripts/setup.sh; or --mxnet-python). Exit 0: equal; "
                    "1: mismatch; 2: usage.")
    parser.add_argument("out", metavar="OUT", help="output directory of `porter convert`")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N",
                        help=f"drawn examples per class, the baseline case included (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the drawn examples and of the weight perturbation (default 0)")
    parser.add_argument("--class", dest="class_name", metavar="NAME",
                        help="check this class only (it needs example inputs: convert with --class NAME "
                             "--input-shape ...); default: every class with example inputs")
    parser.add_argument("--precision", choices=PRECISIONS, default="float32",
                        help="Keras dtype policy of the port; mixed_bfloat16 is judged against the float32 source "
                             "by cosine similarity >= 0.99 (argmax agreement reported for classifiers) and checks "
                             "outputs only: gradients and training are checked by the float32 run (default float32)")
    parser.add_argument("--case", metavar="CASE",
                        help="run one case only, as printed by a failure: 'batch=B,exponent=E,variant=V,seed=S'")
    parser.add_argument("--mxnet-python", metavar="PATH", default=None,
                        help="Python of the mxnet 1.9.1 environment that computes the reference for MXNet Gluon "
                             "sources (default: $PORTER_MXNET_PYTHON, else the repository's .venv-mxnet/bin/python)")
    return parser


def run(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    out = Path(args.out)
    manifest = _read_manifest(out)
    if args.examples < 1:
        raise UsageError(f"--examples {args.examples}: must be at least 1")
    case = _parse_case(args.case)
    source_entry = manifest["sources"][0]
    framework = source_entry.get("framework", "torch")
    mxnet = reference_for_framework(framework, args.mxnet_python)
    if mxnet is not None and args.precision != "float32":
        raise UsageError(f"--precision {args.precision} is not supported for MXNet Gluon sources yet",
                         hint="verify Gluon ports in float32")
    classes = _classes_to_check(manifest, args.class_name, args.out)

    from porter.verify.harness import source_path_of

    source_path = source_path_of(out, manifest)
    if not source_path.is_file():
        raise UsageError(f"source {source_path} (recorded in {out / 'porter-manifest.json'}) does not exist",
                         hint="set PORTER_SOURCE=path/to/model.py")
    progress("loading torch and TensorFlow..." if mxnet is None else "loading TensorFlow...")
    try:
        import hypothesis  # noqa: F401

        from porter.quiet_tf import quiet_start_up

        with quiet_start_up():  # TensorFlow's oneDNN/CPU notes come before TF_CPP_MIN_LOG_LEVEL applies
            import tensorflow  # noqa: F401
        import torch
    except ImportError as error:
        raise UsageError(f"porter verify needs torch, tensorflow and hypothesis ({error})",
                         hint="pip install 'porter[verify]'") from None
    args.mxnet = mxnet
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small models: one torch thread is 2-3x faster beside TensorFlow's own threads
    try:
        with importable_in_its_package(source_roots(out, manifest)):
            return _run_checks(out, args, manifest, classes, source_path, framework, case)
    finally:
        torch.set_num_threads(threads)


def source_roots(out, manifest):
    """The folder a package port's modules import each other from (`porter convert DIR` of a folder without
    `__init__.py` records it relative to OUT), as a list."""
    root = manifest.get("source_root")
    return [Path(os.path.normpath(out.resolve() / root))] if isinstance(root, str) else []


@contextlib.contextmanager
def importable_in_its_package(roots=()):
    """A source file of a package (`porter convert DIR`, or one file of a package) whose relative imports fail when
    it is loaded by path alone is imported as its package's module (porter.verify.package_import)."""
    from porter.verify import harness
    from porter.verify.package_import import with_package_fallback

    by_path = harness.import_path
    harness.import_path = with_package_fallback(by_path, roots)
    try:
        yield
    finally:
        harness.import_path = by_path


def progress(message):
    """A progress line on stderr (stdout keeps the report): the imports and each class take seconds."""
    print(f"porter verify: {message}", file=sys.stderr, flush=True)


def _run_checks(out, args, manifest, classes, source_path, framework, case):
    from porter.verify.localise import display_path

    source_entry = manifest["sources"][0]
    started = time.perf_counter()
    print(f"porter verify {args.out}: {display_path(source_path)} ({framework}) against {source_entry['module']}, "
          f"{args.precision}, seed {args.seed}, {1 if case else args.examples} example(s) per class")
    results = []
    for index, name in enumerate(classes, 1):
        progress(f"checking {name} ({index}/{len(classes)})...")
        results.append(verify_class(out, args, name, case))
    print()
    print(render_table(results, args.precision))
    for result in results:
        for line in result.notes:
            print(f"note: {result.name}: {line}")
    failed = [r for r in results if r.failure_text]
    for result in failed:
        print()
        print(result.failure_text)
    if case is None:
        update_reports(out, args, results)
    print(f"\nporter verify: {'MISMATCH' if failed else 'equal'} ({time.perf_counter() - started:.1f} s)")
    return EXIT_MISMATCH if failed else EXIT_EQUAL


def update_reports(out, args, results):
    """Fill the equivalence sections of OUT/PORTING.md and OUT/report.html (where this porter writes them)."""
    try:
        from porter.report.equivalence import update_reports as update
    except ImportError:
        return
    command = f"porter verify {out.resolve().name}"
    for flag, value, default in (("--examples", args.examples, DEFAULT_EXAMPLES), ("--seed", args.seed, 0),
                                 ("--class", args.class_name, None), ("--precision", args.precision, "float32")):
        if value != default:
            command += f" {flag} {value}"
    summary = {"results": [r.as_report(args.precision) for r in results], "seed": args.seed,
               "examples": args.examples, "precision": args.precision, "command": command}
    try:
        written = update(out, summary)
    except Exception as error:  # the reports are a convenience: the verdict above stands
        print(f"porter: warning: could not update the reports in {out}: {type(error).__name__}: {error}",
              file=sys.stderr)
        return
    if written:
        print(f"porter verify: wrote the results into {', '.join(written)}")


def _without_directories(text):
    """`text` with the directories of absolute paths removed (reports stay free of machine-specific paths)."""
    import re

    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"`]+/)+", "", text)[:500]


def reference_for_framework(framework, mxnet_python):
    """None for torch sources (the reference runs in this process); for MXNet Gluon sources the mxnet 1.9.1
    interpreter that runs the reference (`--mxnet-python`, $PORTER_MXNET_PYTHON or .venv-mxnet), checked here so that
    a missing one is a usage error (exit 2) with the fix."""
    if framework == "torch":
        return None
    if framework != "mxnet":
        raise UsageError(f"unknown source framework {framework!r} in porter-manifest.json")
    from porter.verify.mxnet_reference import mxnet_python as default_mxnet_python
    from porter.verify.mxnet_reference import mxnet_unavailable_reason

    python = default_mxnet_python(mxnet_python)
    problem = mxnet_unavailable_reason(str(python))
    if problem is not None:  # "... : run `bash scripts/setup.sh`, which creates .venv-mxnet ..."
        raise UsageError(f"MXNet Gluon sources are verified against real mxnet 1.9.1; {problem}",
                         hint="or pass --mxnet-python PATH to a Python that has mxnet 1.9.1")
    return python


def _read_manifest(out):
    from porter.verify.harness import read_manifest

    if not out.is_dir():
        raise UsageError(f"{out} is not a directory", hint="pass the output directory of `porter convert`")
    try:
        return read_manifest(out)
    except FileNotFoundError:
        raise UsageError(f"{out} has no porter-manifest.json", hint="run `porter convert SRC -o OUT` first") \
            from None
    except ValueError as error:
        raise UsageError(f"{out}/porter-manifest.json is not valid JSON ({error})",
                         hint="re-run `porter convert --force`") from None


def _parse_case(text):
    if text is None:
        return None
    from porter.verify.strategies import Case

    try:
        return Case.parse(text)
    except ValueError as error:
        raise UsageError(f"--case {text!r}: {error}", hint="copy it from a failure report") from None


def _classes_to_check(manifest, requested, out_text):
    classes = {c["name"]: c for c in manifest["sources"][0]["classes"]}
    hint = ("re-run porter convert with --input-shape SHAPE (one per forward argument, batch excluded, e.g. "
            "3,32,32 or 32:int64:0:1000)")
    if requested is not None:
        if requested not in classes:
            raise UsageError(f"--class {requested}: no such class in {out_text}/porter-manifest.json",
                             hint=f"classes: {', '.join(classes)}")
        if not classes[requested].get("example_inputs"):
            raise UsageError(f"{requested} has no example inputs in {out_text}/porter-manifest.json",
                             hint=f"{hint}, with --class {requested}")
        return [requested]
    checked = [name for name, entry in classes.items() if entry.get("example_inputs")]
    main = manifest.get("main_class")
    checked.sort(key=lambda name: name != main)
    if not checked:
        raise UsageError(f"no class in {out_text}/porter-manifest.json has example inputs "
                         f"(main class {main})", hint=hint)
    return checked


class ClassResult:
    """What verify measured for one checked class, plus rows for the source classes inside it."""

    def __init__(self, name):
        self.name = name
        self.examples = self.judged = self.extreme = 0
        self.max_abs = self.max_rel = 0.0
        self.grad = self.train = self.cosine = self.argmax = None
        self.notes, self.sub_rows = [], []
        self.verdict = "equal"
        self.failure_text = None
        self.message = None  # one line for the reports
        self.localisation = None
        self.seconds = 0.0

    def as_report(self, precision):
        """This result in the form porter.report.equivalence renders (no absolute paths, no timings)."""
        entry = {"class": self.name, "verdict": "pass" if self.verdict == "equal" else "fail",
                 "examples": self.examples, "max_abs_error": self.max_abs, "max_rel_error": self.max_rel,
                 "grad_error": self.grad, "tolerance": 1e-4, "precision": precision}
        if self.message:
            entry["message"] = _without_directories(self.message)
        if self.localisation is not None:
            entry["diverged_at"] = self.localisation.diverged_at(self.name)
        return entry

    def add(self, stage, value):
        """Record what one stage of one example measured ("forward" dict, or a "gradients"/"train" error)."""
        if stage == "forward":
            self.examples += 1
            if value["judged"]:
                self.judged += 1
                self.max_abs, self.max_rel = max(self.max_abs, value["abs"]), max(self.max_rel, value["rel"])
            else:
                self.extreme += 1
            for key in ("cosine", "argmax"):
                if value[key] is not None:
                    current = getattr(self, key)
                    setattr(self, key, value[key] if current is None else min(current, value[key]))
        elif value is not None:
            attribute = "grad" if stage == "gradients" else "train"
            current = getattr(self, attribute)
            setattr(self, attribute, value if current is None else max(current, value))


def verify_class(out, args, name, case):
    if getattr(args, "mxnet", None) is not None:
        return verify_gluon_class(out, args, name, case)
    from porter.verify.harness import PortedPair

    result = ClassResult(name)
    started = time.perf_counter()
    try:
        pair = PortedPair(out, class_name=name, seed=args.seed, precision=args.precision)
    except ImportError as error:
        raise UsageError(f"cannot import the source or the port: {error}",
                         hint="install the source's dependencies, or set PORTER_SOURCE") from None
    except Exception as error:  # constructors or load_state_dict (missing, unexpected or mis-shaped keys)
        if isinstance(error, TypeError) and "required positional argument" in str(error):
            # the constructor needs arguments porter was not given: not a difference of the port
            raise UsageError(f"{name} cannot be built without constructor arguments ({error})",
                             out / "porter-manifest.json",
                             hint="convert again with --init-args '{\"name\": value, ...}'") from None
        result.verdict = "mismatch"
        what = "the source's state_dict does not fit the port" if "state_dict" in str(error) else \
            f"building the models raised {type(error).__name__}"
        result.failure_text = (f"MISMATCH in {name}: {what}: {error}\n"
                               f"  (did the source change after conversion? re-run porter convert --force)")
        result.message = f"{what}: {error}"
        result.seconds = time.perf_counter() - started
        return result
    try:
        from porter.verify.checks import Equivalence

        equivalence = Equivalence(pair)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_reference_accepts(pair, equivalence, out, args.seed)
    if len(equivalence.variants) > 1:
        result.notes.append(f"input sizes drawn from {equivalence.describe_variants()}")
    else:
        result.notes.append(f"input sizes fixed at {equivalence.describe_variants()[3:]} (the source accepts no "
                            f"scaled spatial size or sequence length)")
    failure = run_cases(equivalence, result, args.examples, args.seed, case)
    result.notes.extend(equivalence.notes)
    if equivalence.round_off:
        worst = max(equivalence.round_off, key=lambda item: item[2])
        reasons = "; ".join(sorted({item[4] for item in equivalence.round_off}))
        result.notes.append(
            f"{len(equivalence.round_off)} example(s) had float32 results beyond tolerance (worst {worst[2]:.2e} "
            f"in {worst[3]}, {worst[1]} case {worst[0]}), explained as round-off: {reasons}")
    if failure is not None:
        result.verdict = "mismatch"
        result.failure_text = describe_failure(pair, equivalence, failure, args)
        result.message = f"{failure.stage}: {failure.message}"
        result.localisation = failure.localisation
    elif args.precision == "float32":
        add_class_rows(pair, equivalence, result, args.seed)
    result.seconds = time.perf_counter() - started
    return result


def verify_gluon_class(out, args, name, case):
    """verify_class for a Gluon source: mxnet 1.9.1 in its own interpreter computes the reference."""
    from porter.verify.checks import EquivalenceFailure
    from porter.verify.gluon_checks import GluonEquivalence, GluonPair, MxnetReferenceError, drawn_gluon_cases
    from porter.weights.gluon_params import read_gluon_params

    result = ClassResult(name)
    started = time.perf_counter()
    try:
        pair = GluonPair(out, args.mxnet, Path(__file__).resolve().with_name("mxnet_driver.py"), class_name=name,
                         seed=args.seed, read_params=read_gluon_params)
    except ImportError as error:
        raise UsageError(f"cannot import the port: {error}", hint="re-run porter convert --force") from None
    except TypeError as error:
        raise UsageError(f"{name} cannot be built without constructor arguments ({error})",
                         out / "porter-manifest.json",
                         hint="convert again with --init-args '{\"name\": value, ...}'") from None
    try:
        try:
            equivalence = GluonEquivalence(pair)
        except ValueError as error:
            if pair.reference_state is None:
                raise UsageError(str(error)) from None
            raise
        except MxnetReferenceError as error:
            _gluon_usage_error(pair, error, out)
    except Exception as error:  # load_state_dict (missing, unexpected or mis-shaped keys)
        if isinstance(error, UsageError):
            raise
        pair.close()
        result.verdict = "mismatch"
        what = "the parameters mxnet saved do not fit the port" if "state_dict" in str(error) else \
            f"building the models raised {type(error).__name__}"
        result.failure_text = (f"MISMATCH in {name}: {what}: {error}\n"
                               f"  (did the source change after conversion? re-run porter convert --force)")
        result.message = f"{what}: {error}"
        result.seconds = time.perf_counter() - started
        return result
    try:
        if len(equivalence.variants) > 1:
            result.notes.append(f"input sizes drawn from {equivalence.describe_variants()}")
        else:
            result.notes.append(f"input sizes fixed at {equivalence.describe_variants()[3:]} (the source accepts no "
                                f"scaled spatial size or sequence length)")
        drawn = [case] if case is not None else drawn_gluon_cases(equivalence, args.examples, args.seed)
        try:
            equivalence.prepare(drawn)
        except MxnetReferenceError:
            pass  # a case mxnet itself rejects: each case is then computed alone, and that one fails as a mismatch
        failure = None
        for drawn_case in drawn:
            try:
                for stage, method in (("forward", equivalence.check_forward),
                                      ("gradients", equivalence.check_gradients),
                                      ("train", equivalence.check_train_mode)):
                    try:
                        result.add(stage, method(drawn_case))
                    except EquivalenceFailure:
                        if stage == "forward":
                            result.examples += 1
                        raise
            except EquivalenceFailure as caught:
                failure = caught
                break
        result.notes.extend(equivalence.notes)
        result.notes.append(f"reference: mxnet 1.9.1 ({len(drawn)} case(s) in {pair.batches} mxnet process(es))")
        if equivalence.round_off:
            worst = max(equivalence.round_off, key=lambda item: item[2])
            result.notes.append(f"{len(equivalence.round_off)} example(s) had float32 gradients beyond tolerance "
                                f"(worst {worst[2]:.2e} in {worst[3]}, {worst[1]} case {worst[0]}), explained as "
                                f"round-off: {'; '.join(sorted({item[4] for item in equivalence.round_off}))}")
        if failure is not None:
            from porter.verify.gluon_checks import gluon_failure_report

            command = ["porter", "verify", args.out, "--class", name, "--seed", str(args.seed), "--case",
                       str(failure.case)]
            result.verdict = "mismatch"
            from porter.verify.gluon_localise import localise_gluon

            result.failure_text = gluon_failure_report(equivalence, failure,
                                                       " ".join(shlex.quote(part) for part in command), localise_gluon)
            result.message = f"{failure.stage}: {failure.message}"
            result.localisation = failure.localisation
    finally:
        pair.close()
    result.seconds = time.perf_counter() - started
    return result


def _gluon_usage_error(pair, error, out):
    """A failure of mxnet before any case ran: the source, its constructor arguments or the example inputs."""
    if error.stage in ("initialize the parameters", "load the inputs"):
        from porter.frontend.training_code import ExampleInput

        specs = " ".join(f"--input-shape {ExampleInput.from_manifest(spec).spec_text()}"
                         for spec in pair.input_specs())
        raise UsageError(f"the example inputs recorded for {pair.class_name} ({specs}) do not fit the mxnet model: "
                         f"{error}", str(out / "porter-manifest.json"),
                         hint="convert again with --force and the --input-shape the source's forward takes "
                              "(batch excluded)") from None
    if error.stage == "construct the model":
        raise UsageError(f"{pair.class_name} cannot be built in mxnet: {error}", str(out / "porter-manifest.json"),
                         hint="convert again with --init-args '{\"name\": value, ...}'") from None
    raise UsageError(f"the mxnet reference failed: {error}", str(pair.source_path),
                     hint="run the source in .venv-mxnet to see why") from None


def check_reference_accepts(pair, equivalence, out, seed):
    """The recorded example inputs must be inputs the torch model itself takes: when the reference raises on
    them, the input spec is wrong (exit 2), not the port."""
    try:
        pair.run_torch(equivalence.inputs(equivalence.baseline(seed)))
    except Exception as error:  # noqa: BLE001 - whatever the source raises: shape, dtype or index errors
        first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), "")[:300]
        from porter.frontend.training_code import ExampleInput

        specs = " ".join(f"--input-shape {ExampleInput.from_manifest(spec).spec_text()}"
                         for spec in equivalence.specs)
        raise UsageError(f"the example inputs recorded for {pair.class_name} ({specs}) do not fit the torch model: "
                         f"it raised {type(error).__name__}: {first_line}", str(out / "porter-manifest.json"),
                         hint="convert again with --force and the --input-shape the source's forward takes "
                              "(batch excluded)") from None


def run_cases(equivalence, result, examples, seed, case):
    """Run the checks on `case`, or on the baseline and examples - 1 drawn cases; the failure, or None."""
    from porter.verify.checks import EquivalenceFailure

    def check(case):
        for stage, method in (("forward", equivalence.check_forward), ("gradients", equivalence.check_gradients),
                              ("train", equivalence.check_train_mode)):
            try:
                result.add(stage, method(case))
            except EquivalenceFailure:
                if stage == "forward":
                    result.examples += 1
                raise

    if case is not None or examples == 1:
        try:
            check(case or equivalence.baseline(seed))
        except EquivalenceFailure as failure:
            return failure
        return None
    from hypothesis import HealthCheck, Phase, example, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.reporting import with_reporter

    @settings(max_examples=examples - 1, database=None, deadline=None, derandomize=False,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False)
    @hypothesis_seed(seed)
    @example(case=equivalence.baseline(seed))
    @given(case=equivalence.cases())
    def check_case(case):
        check(case)

    try:
        with with_reporter(lambda message: None):
            check_case()
    except EquivalenceFailure as failure:
        return failure
    return None


def describe_failure(pair, equivalence, failure, args):
    from porter.verify.localise import failure_report

    command = ["porter", "verify", args.out, "--class", pair.class_name, "--seed", str(args.seed),
               "--case", str(failure.case)]
    if args.precision != "float32":
        command += ["--precision", args.precision]
    tolerance = BF16_LOCALISATION_TOLERANCE if equivalence.bf16 else 1e-4
    return failure_report(equivalence, failure, " ".join(shlex.quote(part) for part in command), tolerance)


def add_class_rows(pair, equivalence, result, seed):
    """Rows for the source's classes used inside the checked one, from a submodule capture on the baseline."""
    from porter.verify.localise import compare_submodules, float64_capture

    inputs = equivalence.inputs(equivalence.baseline(seed))
    try:
        # (round-off told from a port error against torch in float64, as checks.py does for outputs)
        exact = None if equivalence.bf16 else lambda: float64_capture(equivalence.float64_torch, inputs)
        steps = compare_submodules(pair.torch_model, pair.keras_model, inputs, exact=exact)
    except Exception as error:  # a capture problem must not hide the verdict of the checks that ran
        result.notes.append(f"submodule capture failed ({type(error).__name__}: {error})")
        return
    rounded = list(dict.fromkeys(step.name for step in steps if step.round_off))  # (in the order they ran)
    if rounded:
        result.notes.append(f"{len(rounded)} submodule output(s) beyond tolerance against torch's float32 (first "
                            f"{rounded[0]}), explained as round-off: as precise as torch's own float32 against "
                            f"torch in float64")
    modules = dict(pair.torch_model.named_modules())
    rows = {}
    for step in steps:
        module = modules[step.name]
        if not step.name or type(module).__module__ != pair.torch_module.__name__:
            continue
        row = rows.setdefault(step.type_name, {"calls": 0, "abs": 0.0, "rel": 0.0, "verdict": "equal",
                                               "first": step.name})
        row["calls"] += 1
        row["abs"], row["rel"] = max(row["abs"], step.out_abs), max(row["rel"], step.out_error)
        if step.output_diverged and not step.input_diverged:
            row["verdict"] = "mismatch"
            result.verdict = "mismatch"
        elif step.output_diverged and row["verdict"] == "equal":
            row["verdict"] = "input differs"
    result.sub_rows = sorted(rows.items())
    bad = [name for name, row in result.sub_rows if row["verdict"] == "mismatch"]
    if bad:
        from porter.verify.localise import locate

        localisation = locate(steps, pair)
        text = localisation.describe(pair.class_name) if localisation is not None else ""
        result.localisation = localisation
        result.message = f"submodules of class {', '.join(bad)} diverge on the baseline case"
        result.failure_text = (f"MISMATCH in {pair.class_name}: outputs match, but submodules of class "
                               f"{', '.join(bad)} diverge on the baseline case {equivalence.baseline(seed)}\n"
                               + "\n".join("  " + line for line in text.splitlines()))


def _format(value):
    return "-" if value is None else f"{value:.2e}"


def render_table(results, precision):
    """The per-class table; sub-rows (source classes inside a checked class) are indented."""
    bf16 = precision == "mixed_bfloat16"
    headers = ["class", "examples", "max abs err", "max rel err"]
    headers += ["min cosine", "argmax agree"] if bf16 else ["grad err", "train err"]
    headers += ["verdict", "time"]
    rows = []
    for result in results:
        examples = f"{result.examples}" + (f" ({result.extreme} extreme)" if result.extreme else "")
        judged = result.judged > 0
        row = [result.name, examples, _format(result.max_abs if judged else None),
               _format(result.max_rel if judged else None)]
        if bf16:
            row += ["-" if result.cosine is None else f"{result.cosine:.5f}",
                    "-" if result.argmax is None else f"{100 * result.argmax:.1f}%"]
        else:
            row += [_format(result.grad), _format(result.train)]
        rows.append(row + [result.verdict, f"{result.seconds:.1f}s"])
        for name, sub in result.sub_rows:
            entry = [f"  {name}", f"{sub['calls']} call(s)", _format(sub["abs"]), _format(sub["rel"]), "-", "-",
                     sub["verdict"], ""]
            rows.append(entry)
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    from porter.cli import main

    sys.exit(main([COMMAND, *sys.argv[1:]]))
