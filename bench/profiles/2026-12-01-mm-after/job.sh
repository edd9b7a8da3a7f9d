#!/usr/bin/env bash
# timeout: 150
# mm job 2: record the matmul targets (7 interleaved rounds after a heat soak, clocks sampled), the after
# profile (ncu, same window as the lead's baseline), the GPU tests of the matmul kernel.
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,power.limit --format=csv,noheader
s=$(date +%s)
timeout 50 python3 bench/run.py matmul --option "groups=('square',)" --option "square_sizes=(4096, 8192)" \
  --name matmul_targets_h200 --out-dir "$JOB_OUT" --no-progress
echo "record rc=$? $(( $(date +%s) - s ))s"
M=smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
s=$(date +%s)
timeout 25 ncu --clock-control none --profile-from-start off --csv --page details $S --metrics $M \
  python3 bench/profile_kernels.py matmul_bf16_4096 > "$JOB_OUT/ncu_after_bf16_4096.csv" 2> "$JOB_OUT/ncu_after_bf16_4096.err"
echo "ncu 4096 rc=$? $(( $(date +%s) - s ))s"
s=$(date +%s)
N=""; python3 -c "import xdist" 2>/dev/null && N="-n 8"
timeout 40 python3 -m pytest -q -p no:cacheprovider -m gpu $N tests/kernels/test_matmul.py 2>&1 | tail -15
echo "tests rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s"
s=$(date +%s)
timeout 20 ncu --clock-control none --profile-from-start off --csv --page details $S --metrics $M \
  python3 bench/profile_kernels.py matmul_bf16_8192 > "$JOB_OUT/ncu_after_bf16_8192.csv" 2> "$JOB_OUT/ncu_after_bf16_8192.err"
echo "ncu 8192 rc=$? $(( $(date +%s) - s ))s"
s=$(date +%s)
timeout 15 ncu --clock-control none --profile-from-start off --csv --page details \
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  python3 bench/profile_kernels.py matmul_bf16_4096 > "$JOB_OUT/ncu_stalls_bf16_4096.csv" 2> "$JOB_OUT/ncu_stalls_bf16_4096.err"
echo "ncu stalls rc=$? $(( $(date +%s) - s ))s"
timeout 10 python3 bench/matmul_profile.py \
  before:bf16:4096=bench/profiles/2026-12-01-baseline/ncu_matmul_bf16_4096.csv \
  after:bf16:4096="$JOB_OUT/ncu_after_bf16_4096.csv" after:bf16:8192="$JOB_OUT/ncu_after_bf16_8192.csv" \
  stalls:bf16:4096="$JOB_OUT/ncu_stalls_bf16_4096.csv" --out-dir "$JOB_OUT" --skip-bad
echo "collect rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
