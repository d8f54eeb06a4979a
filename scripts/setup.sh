#!/usr/bin/env bash
# Create .venv with porter and everything its tests need (torch 2.13 CPU, tensorflow-cpu 2.21). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build
.venv/bin/python -m pip install --quiet "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install --quiet -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import porter, torch, tensorflow, keras" 2>/dev/null || {
  echo "setup: the virtual environment is incomplete" >&2; exit 1; }
if [ "${PORTER_BROWSER:-1}" = "1" ] && ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] \
   && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "setup: chromium not installed; the HTML report browser test will be skipped" >&2
fi
echo "setup: .venv ready"
