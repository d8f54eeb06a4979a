#!/usr/bin/env bash
# Create .venv with porter and everything its tests need (torch 2.13 CPU, tensorflow-cpu 2.21). Idempotent.
#
#   bash scripts/setup.sh                  # the virtual environment only; never touches the system
#   bash scripts/setup.sh --with-browser   # also apt-get install chromium (as root) for the HTML-report browser
#                                          # test; PORTER_INSTALL_BROWSER=1 asks for the same
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
BROWSER=${PORTER_INSTALL_BROWSER:-0}
for argument in "$@"; do
  case "$argument" in
    --with-browser) BROWSER=1 ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option $argument (see --help)" >&2; exit 2 ;;
  esac
done
step() { echo "setup: $*"; }
# PYTHONWARNINGS: setuptools' build-backend notices (editable installs) reach the terminal through pip otherwise
pip_quiet() { PYTHONWARNINGS=ignore .venv/bin/python -m pip install --quiet "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

started=$SECONDS
if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version 2>&1)..."
  "$PYTHON" -m venv .venv
fi
step "upgrading pip..."
pip_quiet --upgrade pip
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build
step "installing torch 2.13.0 (CPU)..."
pip_quiet "torch==2.13.0"
step "installing porter (editable) with tensorflow-cpu 2.21, keras, hypothesis and pytest..."
pip_quiet -e ".[dev]"
# the public corpus of real model files the tests convert (tests/corpus); its compiled ops need CUDA and are not
# used, so it goes in without dependencies (torch is already pinned above)
step "installing torchvision 0.28.0 (model files for the corpus tests, --no-deps)..."
pip_quiet --no-deps "torchvision==0.28.0"
# timm: the reference for porter's timm rules (tests/rules/test_timm.py); its dependencies are torch, torchvision
# and small ones already present, and an unpinned install would pull another torch
step "installing timm 1.0.31 (--no-deps)..."
pip_quiet --no-deps "timm==1.0.31"
# held-out corpora of real model code from other projects (tests/corpus): lucidrains' vit-pytorch (einops
# transformers), Cadene's pretrainedmodels (a library of convnets with weight registries) and lukemelas'
# efficientnet_pytorch (a package with relative imports); pure Python, their dependencies are already present
step "installing vit-pytorch 1.26.14, pretrainedmodels 0.7.4, efficientnet_pytorch 0.7.1 (corpus, --no-deps)..."
pip_quiet --no-deps "vit-pytorch==1.26.14" "pretrainedmodels==0.7.4" "efficientnet_pytorch==0.7.1"
# more of lucidrains' packages (tests/corpus/test_lucidrains.py): MLP-Mixer, gMLP, Perceiver and Conformer, each pure
# torch + einops (einops>=0.8 comes with the dev extras)
step "installing mlp-mixer-pytorch 0.3.1, g-mlp-pytorch 0.1.5, perceiver-pytorch 0.11.0, conformer 0.3.2 (corpus, --no-deps)..."
pip_quiet --no-deps "mlp-mixer-pytorch==0.3.1" "g-mlp-pytorch==0.1.5" "perceiver-pytorch==0.11.0" "conformer==0.3.2"
# d2l 1.0.3 (tests/corpus/test_d2l.py): its torch.py is a 140 KB library file mixing dozens of model classes with
# plotting, data and training utilities; only the file is read (its plotting/data dependencies are not needed)
step "installing d2l 1.0.3 (corpus, --no-deps)..."
pip_quiet --no-deps "d2l==1.0.3"
# pytorchcv 0.0.74 (tests/corpus/test_pytorchcv.py): osmr's zoo of ~150 model files built from layer factories
# (`conv1x1_block(normalization=lambda_batchnorm2d())`) spread over a common/ package; pure Python
step "installing pytorchcv 0.0.74 (corpus, --no-deps)..."
pip_quiet --no-deps "pytorchcv==0.0.74"
# torchaudio 2.11.1 (tests/corpus/test_torchaudio.py): its model files only (ConvTasNet, Emformer, Hybrid Demucs...),
# each importing torch alone; the package itself is never imported (its compiled extension is built for torch 2.11)
step "installing torchaudio 2.11.1 (corpus model files, --no-deps)..."
pip_quiet --no-deps "torchaudio==2.11.1"
# MONAI 1.6.1 (tests/corpus/test_monai.py): medical-imaging networks built through layer registries; its only
# dependencies, torch and numpy, are here already
step "installing monai 1.6.1 (corpus, --no-deps)..."
pip_quiet --no-deps "monai==1.6.1"
step "checking that porter, torch, tensorflow and keras import..."
.venv/bin/python -c "import porter, torch, tensorflow, keras" 2>/dev/null || {
  echo "setup: the virtual environment is incomplete" >&2; exit 1; }
# mxnet 1.9.1 (the reference for Gluon sources) needs numpy < 1.24, which tensorflow cannot share: its own venv,
# driven by subprocess (porter/verify/mxnet_reference.py). Without it the mxnet tests skip and say to run this script.
MXNET_VENV=.venv-mxnet
mxnet_works() {
  "$MXNET_VENV/bin/python" -c "import mxnet; assert mxnet.__version__ == '1.9.1'; mxnet.nd.ones((2, 2)).asnumpy()" \
    >/dev/null 2>&1
}
mxnet_pip() {
  PYTHONWARNINGS=ignore "$MXNET_VENV/bin/python" -m pip install --quiet "$@" 2>&1 | grep -v "^WARNING: Location" || true
}
if [ -x "$MXNET_VENV/bin/python" ] && mxnet_works; then
  step "mxnet 1.9.1 is already installed in $MXNET_VENV"
else
  step "installing mxnet 1.9.1 with numpy 1.23.5 in $MXNET_VENV (the Gluon reference; it needs numpy < 1.24)..."
  if [ -x "$MXNET_VENV/bin/python" ] || "$PYTHON" -m venv "$MXNET_VENV" >/dev/null 2>&1; then
    mxnet_pip "mxnet==1.9.1" "numpy==1.23.5"
  fi
  mxnet_works || echo "setup: warning: could not install mxnet 1.9.1 in $MXNET_VENV (no wheel for this platform or" \
    "no network?); the mxnet tests are skipped until scripts/setup.sh succeeds" >&2
fi
# GluonCV's model zoo: held-out Gluon model files (tests/mxnet/test_gluoncv_models.py); its optional dependencies
# (opencv, matplotlib...) are not needed by the model files, so it goes in without them
if mxnet_works && ! "$MXNET_VENV/bin/python" -c "import importlib.util as u; assert u.find_spec('gluoncv')" \
    >/dev/null 2>&1; then
  step "installing gluoncv 0.10.5.post0 in $MXNET_VENV (held-out Gluon corpus, --no-deps)..."
  mxnet_pip --no-deps "gluoncv==0.10.5.post0"
fi
# gluoncv.data, which the hrnet and shufflenet factories import (ImageNet1kAttr), needs tqdm, Pillow and scipy; with
# numpy pinned, so that pip cannot move it past mxnet's < 1.24
if mxnet_works && ! "$MXNET_VENV/bin/python" -c "import tqdm, PIL, scipy" >/dev/null 2>&1; then
  step "installing tqdm, Pillow and scipy in $MXNET_VENV (gluoncv.data, numpy kept at 1.23.5)..."
  mxnet_pip "tqdm==4.70.1" "Pillow==13.0.0" "scipy==1.15.3" "numpy==1.23.5"
fi
# GluonNLP 0.10.0's sources: held-out Gluon model files (BERT, the Transformer, language models) that
# tests/mxnet/test_third_party_gluon.py converts as they are; only the sdist is fetched and unpacked (its compiled
# tokenizer and data pipeline are not used), into the git-ignored .cache/gluonnlp-0.10.0
GLUONNLP_DIR=.cache/gluonnlp-0.10.0
if [ -d "$GLUONNLP_DIR/src/gluonnlp/model" ]; then
  step "GluonNLP 0.10.0's sources are already unpacked in $GLUONNLP_DIR"
else
  step "fetching GluonNLP 0.10.0's sdist into $GLUONNLP_DIR (held-out Gluon corpus, not installed)..."
  # --no-build-isolation: pip reads the sdist's metadata with .venv's setuptools instead of building a fresh
  # environment (minutes); the isolated way is the fallback
  if ! { mkdir -p .cache/downloads 2>/dev/null &&
         { PYTHONWARNINGS=ignore .venv/bin/python -m pip download --quiet --no-deps --no-build-isolation \
             "gluonnlp==0.10.0" -d .cache/downloads >/dev/null 2>&1 ||
           PYTHONWARNINGS=ignore .venv/bin/python -m pip download --quiet --no-deps "gluonnlp==0.10.0" \
             -d .cache/downloads >/dev/null 2>&1; } &&
         tar -xzf .cache/downloads/gluonnlp-0.10.0.tar.gz -C .cache 2>/dev/null; }; then
    echo "setup: warning: could not fetch GluonNLP 0.10.0's sdist (no network?); its tests are skipped" >&2
  fi
fi
if [ "$BROWSER" = "1" ]; then
  if command -v chromium >/dev/null 2>&1; then
    step "chromium is already installed"
  elif [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: warning: installing chromium needs root and apt-get; install it yourself, else the HTML-report" \
         "browser test is skipped" >&2
  else
    step "installing chromium with apt-get (asked for by --with-browser / PORTER_INSTALL_BROWSER=1)..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade chromium >/dev/null) \
      || echo "setup: warning: apt-get could not install chromium; the HTML-report browser test is skipped" >&2
  fi
elif ! command -v chromium >/dev/null 2>&1; then
  step "no chromium: the HTML-report browser test will be skipped (PORTER_INSTALL_BROWSER=1 or --with-browser installs it)"
fi
echo "setup: .venv ready ($((SECONDS - started)) s)"
