"""Ports of a test's torch snippet (main class Net), one per set of constructor arguments, made once per module."""

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_same_outputs, cached, random_input


def snippet_ports(tmp_path_factory, source, input_spec, argument=None):
    """value -> output folder of `source` converted with `Net(**{argument: value})`, or with Net's defaults when
    `argument` is None (the value then only names the port); cached, a failure is kept."""

    def port(value):
        folder = tmp_path_factory.mktemp("snippet")
        (folder / "op_model.py").write_text(source)
        conversion = convert(ConvertOptions(folder / "op_model.py", folder / "out", class_name="Net",
                                            input_specs=[input_spec], init_args={argument: value} if argument else {}))
        assert conversion.exit_code == 0, conversion.manifest
        write_tree(folder / "out", conversion.files)
        return folder / "out"

    return cached(port)


def assert_matches_torch(out, seed, shape, tolerance=1e-4):
    """The port in `out` matches torch on a drawn input of `shape`, eagerly and under XLA."""
    pair = PortedPair(out, seed=seed)
    x = random_input(seed, shape)
    assert_same_outputs(pair, [x], tolerance=tolerance)
    assert_same_outputs(pair, [x], tolerance=tolerance, jit=True)
