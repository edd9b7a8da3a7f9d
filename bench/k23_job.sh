#!/bin/bash
# One batched H200 job (helper k23): GPU tests of the changed wrappers, the host-time family, the
# FlashAttention forward at N not a multiple of the block, softmax on vocabulary-sized and long rows.
# Run from the repository root of a checkout whose .k23/ holds lib, bench, tests: bash .k23/bench/k23_job.sh
cd .k23 || exit 1
export PYTHONPATH=$PWD/lib PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
timeout 110 python3 -m pytest -p no:cacheprovider -q -n 8 tests/kernels/test_softmax.py \
  tests/kernels/test_norm.py tests/kernels/test_matmul.py tests/kernels/test_flash_attention.py \
  tests/kernels/test_flash_attention_bwd.py > $OUT/tests.log 2>&1
echo "tests rc=$? in $(( $(date +%s) - T0 )) s"; tail -5 $OUT/tests.log
python3 bench/run.py host --no-progress --out-dir $OUT 2>&1 | tee $OUT/host.log | tail -20
timeout 110 python3 bench/run.py attention --no-progress --out-dir $OUT --name attention_odd_h200 \
  --option "n_values=(1000, 1500, 3000, 4000)" 2>&1 | tee $OUT/attention.log | grep -E "triton|FAIL|wrote" | head -40
timeout 110 python3 bench/run.py softmax --no-progress --out-dir $OUT --name softmax_targets_h200 \
  --option sweep=False --option "shapes=((32768, 4096), (4096, 32000), (2048, 50257), (1024, 128256), (32768, 3000), (32768, 5000), (32768, 6144), (2048, 65536), (1024, 131072), (512, 262144))" \
  2>&1 | tee $OUT/softmax.log | grep -E "auto|FAIL|wrote" | head -40
echo "total $(( $(date +%s) - T0 )) s"
