#!/usr/bin/env bash
# Build porter's wheel, install it into a fresh virtual environment (porter and its three light dependencies
# only: no torch, no TensorFlow) and convert a fixture with the installed `porter`: the wheel carries everything
# `porter convert` needs (the templates included). Uses .venv's Python and setuptools to build (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/porter-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
quiet() { grep -v -e "^WARNING: Location" -e "^$" || true; }

echo "check_wheel: building the wheel..."
mkdir "$WORK/src"
# a copy of what the build reads: the checkout's build/ and egg-info never leak in
cp -r porter templates pyproject.toml setup.py MANIFEST.in README.md "$WORK/src/"
find "$WORK/src" -name __pycache__ -prune -exec rm -rf {} +
(cd "$WORK/src" && "$PYTHON" -m pip wheel --quiet --no-deps --no-build-isolation -w "$WORK/dist" . 2>&1 | quiet)
WHEEL=$(ls "$WORK"/dist/porter-*.whl)

echo "check_wheel: installing $(basename "$WHEEL") into a fresh venv..."
"$PYTHON" -m venv "$WORK/venv"
# the light dependencies at the versions .venv holds: pip's cache has them, nothing large is downloaded
PINS=$("$PYTHON" -m pip list --format=freeze 2>/dev/null | grep -i -E "^(libcst|jinja2|ruff)==" || true)
[ -n "$PINS" ] || PINS="libcst>=1.1 jinja2>=3.1 ruff>=0.5"
# shellcheck disable=SC2086
"$WORK/venv/bin/python" -m pip install --quiet $PINS 2>&1 | quiet
"$WORK/venv/bin/python" -m pip install --quiet --no-deps "$WHEEL" 2>&1 | quiet

echo "check_wheel: converting fixtures/mlp.py with the installed porter..."
cd "$WORK"  # away from the checkout: `porter` must come from the wheel
"$WORK/venv/bin/python" -c "import porter, sys; sys.exit(0 if '$ROOT' not in porter.__file__ else 'porter imported from the checkout')"
"$WORK/venv/bin/porter" convert "$ROOT/fixtures/mlp.py" -o "$WORK/out"
for name in mlp_keras.py PORTING.md train_tpu.py porter-manifest.json; do
  [ -s "$WORK/out/$name" ] || { echo "check_wheel: $name missing from the converted output" >&2; exit 1; }
done
echo "check_wheel: ok"
