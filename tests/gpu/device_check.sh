#!/usr/bin/env bash
# The GPU check of issues 14 (item 6) and 24 (item 4), prepared to run in ONE call on a lent GPU
# machine (an H200 through the device tool), within BUDGET_S seconds (default 500, under the call's
# timeout_s=540); each step's timeout is its cap or what is left of the budget, whichever is less:
#   1. device parity: pytest -m gpu (tests/gpu: stimuli and logits on CUDA equal the CPU's), cap 150 s;
#   2. the throughput harness on ResNet-50 (torchvision's architecture, random weights made there:
#      images/s do not depend on the weights; the bfloat16 agreement lines of a random network
#      say nothing about a trained one, the CPU run on EfficientNet-Lite0 does that), cap 200 s;
#   3. data-major throughput: 8 resident ResNet-50s (copies of that random network) on a generated
#      ImageNet-C-like set of DM_IMAGES 224 px JPEGs, decode included, float32 and bfloat16 +
#      channels_last, beside the model-major baseline (throughput --data-major 8), cap 240 s (the
#      issue's bound is 8 minutes), merged into step 2's throughput JSON;
#   4. the cost plan from that measurement (python -m repro plan --throughput), cap 30 s;
#   5. PGD's early-stop rule (issue 38) against the full attack on that ResNet-50, PGD_IMAGES (default
#      256) seeded GraySplit images: parity (the early-stop attack's outcomes equal the full attack's
#      with every iterate judged; the images where they differ are counted: the batch shrinks as
#      images stop, and cuDNN's sums may depend on it) and the pass and time ratios, cap 60 s.
# Outputs (logs, the throughput JSON, the plan) go to $OUT, which the device tool sends back.
# Every step runs even when an earlier one failed; the exit status is 1 if any failed.
#
# Here, once (needs PyPI): `bash tests/gpu/device_check.sh --prepare` fills .device/ (git-ignored):
# wheels of the few packages the device image lacks (Python 3.12) and a 128-image subset of the
# cue-conflict images (8 per category) with all of GraySplit from the data directory (about 25 MB in all).
# On the machine: run(command="bash tests/gpu/device_check.sh", carry=[".device"], timeout_s=540).
# A CPU dry run of the same steps, on a tiny zoo model instead of ResNet-50 so that it ends in
# minutes on 2 cores (it checks the script, not a device's speed):
#   DEVICE=cpu MODEL=tiny_random_a LIMIT=16 DM_MODELS=2 DM_IMAGES=32 PGD_IMAGES=8 OUT=/tmp/out \
#     PYTHON=.venv/bin/python bash tests/gpu/device_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
PREP=${DEVICE_CHECK_DIR:-.device}  # what --prepare fills and the run reads (relative to the checkout)
LIMIT=${LIMIT:-128}
DM_MODELS=${DM_MODELS:-8}  # data-major: resident copies of the network
DM_IMAGES=${DM_IMAGES:-2048}  # data-major: generated JPEGs
PGD_IMAGES=${PGD_IMAGES:-256}  # step 5: GraySplit images
BUDGET_S=${BUDGET_S:-500}  # the whole run (steps 1-5), seconds
CAP_FACTOR=${CAP_FACTOR:-1}  # scales every step's cap and reserve (the CPU dry-run test lifts them)
START=$(date +%s)
# the timeout of a step: its cap, or what is left of the budget minus RESERVE for the later steps
step_s() {
  local cap=$(( $1 * CAP_FACTOR )) reserve=$(( $2 * CAP_FACTOR )) left
  left=$(( BUDGET_S - ($(date +%s) - START) - reserve ))
  [ "$left" -lt "$cap" ] && cap=$left
  [ "$cap" -lt 1 ] && cap=1
  echo "$cap"
}

if [ "${1:-}" = "--prepare" ]; then
  set -e
  data=${REPRO_DATA_DIR:-../shared/data}
  rm -rf "$PREP" && mkdir -p "$PREP/wheels" "$PREP/data/texture-vs-shape/cue-conflict" "$PREP/data/critical-band-masking"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 -d "$PREP/wheels" platformdirs submitit syrupy
  # LIMIT / 16 cue-conflict images per category (the first in sorted order), marked as a subset so
  # the loader, which otherwise wants all 16 x 80, accepts it (repro/datasets/layout.py)
  per=$((LIMIT / 16)) cc="$PREP/data/texture-vs-shape/cue-conflict"
  for dir in "$data"/texture-vs-shape/cue-conflict/*/; do
    cat=$(basename "$dir"); mkdir -p "$cc/$cat"
    find "$dir" -maxdepth 1 -name '*.png' | sort | sed -n "1,${per}p" | xargs -I{} cp {} "$cc/$cat/"
  done
  python3 - "$cc" "$per" <<'PY'
import json, os, sys
root, per = sys.argv[1], int(sys.argv[2])
classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
marker = {"format": "repro-mini/1", "dataset": "cue_conflict", "mini": True, "classes": classes, "per_class": per,
          "images": per * len(classes), "note": "a subset of the real cue-conflict images for the device check's "
          "throughput (tests/gpu/device_check.sh); not the full set: a shape bias on it is not the study's"}
open(os.path.join(root, ".repro-mini.json"), "w").write(json.dumps(marker, indent=1) + "\n")
PY
  cp -r "$data/critical-band-masking/GraySplit" "$PREP/data/critical-band-masking/"
  du -sh "$PREP"
  exit 0
fi

OUT=${OUT:?set OUT: the folder the outputs go to (the device tool sets it)}
DEVICE=${DEVICE:-cuda}
PY=${PYTHON:-python3}
[ -d "$PREP/data" ] || { echo "device_check: $PREP/data missing: run 'bash tests/gpu/device_check.sh --prepare' here first and carry $PREP"; exit 2; }
if [ -d "$PREP/wheels" ] && [ "$PY" = python3 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$PREP"/wheels/*.whl || exit 2
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 REPRO_DATA_DIR=$(realpath -m "$PREP/data")
export REPRO_CACHE_DIR=${REPRO_CACHE_DIR:-/tmp/repro-cache} MPLBACKEND=Agg REPRO_PARITY_DEVICE=$DEVICE
rc=0
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi";
  "$PY" -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } \
  2>&1 | tee "$OUT/machine.txt"

echo "== 1. device parity (pytest -m gpu)"
timeout "$(step_s 150 360)" "$PY" -m pytest -m gpu tests/gpu -q -p no:cacheprovider 2>&1 | tee "$OUT/parity.log" || rc=1

MODEL=${MODEL:-}
if [ -z "$MODEL" ]; then
  MODEL=/tmp/resnet50-random.pt
  "$PY" -c "import torch, torchvision; torch.manual_seed(0); torch.save(torchvision.models.resnet50().state_dict(), '$MODEL')" || exit 1
fi
NAME=$(basename "$MODEL" .pt)
MAIN="$OUT/throughput-$NAME-$DEVICE.json" DM="$OUT/throughput-data-major-$DEVICE.json"
STAGES=${STAGES:-shape_bias,spectral,critical_band,classify,pgd}

echo "== 2. throughput, $NAME, $LIMIT images per data set, stages $STAGES"
timeout "$(step_s 200 330)" "$PY" -m repro throughput --model "$MODEL" --device "$DEVICE" --limit "$LIMIT" \
  --stages "$STAGES" --out "$MAIN" 2>&1 | tee "$OUT/throughput.log" || rc=1

echo "== 3. data-major throughput, $DM_MODELS x $NAME, $DM_IMAGES generated JPEGs, decode included"
timeout "$(step_s 240 90)" "$PY" -m repro throughput --model "$MODEL" --device "$DEVICE" --stages classify \
  --limit "$DM_IMAGES" --data-major "$DM_MODELS" --out "$DM" 2>&1 | tee "$OUT/throughput-data-major.log" || rc=1
"$PY" - "$MAIN" "$DM" <<'PY' || rc=1
import json, os, sys
main, extra = sys.argv[1], sys.argv[2]
for path, step in ((main, 2), (extra, 3)):
    if not os.path.exists(path):
        sys.exit(f"device_check: {path} missing: step {step} wrote no JSON (see its log beside it)")
doc, dm = json.load(open(main)), json.load(open(extra))
if not dm.get("data_major"):
    sys.exit(f"device_check: {extra} has no data_major runs: step 3 ended before them (see its log)")
doc["data_major"] = dm["data_major"]  # the data-major runs join the harness's JSON, which plan reads
json.dump(doc, open(main, "w"), indent=1)
print("data_major runs merged into", main)
PY

echo "== 4. cost plan from that measurement"
if [ -e "$MAIN" ]; then
  timeout "$(step_s 30 60)" "$PY" -m repro plan --throughput "$MAIN" 2>&1 | tee "$OUT/plan.txt" || rc=1
else
  echo "device_check: no plan: $MAIN missing (step 2 failed)" | tee "$OUT/plan.txt"; rc=1
fi

echo "== 5. PGD early stop vs the full attack, $NAME, $PGD_IMAGES GraySplit images: parity and ratios"
timeout "$(step_s 60 0)" "$PY" -m tests.real.pgd_deviation --models "$MODEL" --device "$DEVICE" \
  --images "$PGD_IMAGES" --batch-size 64 --out "$OUT/pgd-early-stop.json" 2>&1 | tee "$OUT/pgd-early-stop.txt" || rc=1
grep -Eq " (yes|NO) \([0-9]+/[0-9]+\)$" "$OUT/pgd-early-stop.txt" || { echo "device_check: PGD early stop: no result line (see pgd-early-stop.txt)"; rc=1; }
echo "device_check: $(( $(date +%s) - START )) s of the $BUDGET_S s budget, exit $rc"
exit "$rc"
