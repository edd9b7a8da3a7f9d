#!/usr/bin/env bash
# The decode helper's GPU check (2026-12-04): the family `decode` (record written to $OUT/decode/), a
# per-shape report, a quick launch sweep, then the tests compiled on the GPU. About 2 minutes.
# Usage: OUT=/some/dir PYTHONPATH=$PWD/lib bash bench/decode_gpu.sh
set -u
mkdir -p "$OUT/decode"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
echo "== family decode"
if [ -n "${HALVES:-}" ]; then  # two records, so that a timeout loses at most one half
  timeout ${LONG_S:-40} python3 bench/run.py decode --out-dir "$OUT/decode" --warmup-ms ${WARMUP_MS:-5} \
      --rep-ms ${REP_MS:-20} --no-progress --name decode_h200_long --option host=False \
      --option min_keys=8192 2>&1 | tail -100
  timeout ${SHORT_S:-25} python3 bench/run.py decode --out-dir "$OUT/decode" --warmup-ms ${WARMUP_MS:-5} \
      --rep-ms ${REP_MS:-20} --no-progress --name decode_h200_short --option max_keys=4096 2>&1 | tail -60
else
  timeout ${BENCH_S:-60} python3 bench/run.py decode --out-dir "$OUT/decode" --warmup-ms ${WARMUP_MS:-5} \
      --rep-ms ${REP_MS:-20} --no-progress ${RUN_ARGS:-} 2>&1 | tail -150
fi
echo "== per shape"
python3 - "$OUT/decode" <<'PY'
import glob, json, sys
from gpuperf.results.decode import report_shapes
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    print(path)
    report_shapes(json.load(open(path))["results"])
PY
if [ -z "${NO_SWEEP:-}" ]; then
  echo "== sweep"
  timeout ${SWEEP_S:-25} python3 bench/decode_sweep.py --quick 2>&1 | tail -150
fi
echo "== tests"
timeout ${TEST_S:-25} python3 -m pytest -q -p no:cacheprovider -rfE tests/kernels/test_decode.py 2>&1 | tail -40
