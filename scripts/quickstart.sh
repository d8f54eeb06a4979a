#!/usr/bin/env bash
# Quick start: set up, convert the bundled ResNet example, and check the port against torch.
# Options go to scripts/setup.sh (e.g. --with-browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "$@"
rm -rf out/resnet
echo "quickstart: converting fixtures/resnet.py..."
.venv/bin/porter convert fixtures/resnet.py -o out/resnet
echo "quickstart: checking out/resnet against torch (loading torch and TensorFlow)..."
if .venv/bin/porter verify --help >/dev/null 2>&1; then
  .venv/bin/porter verify out/resnet
else
  .venv/bin/python scripts/check_port.py out/resnet
fi
