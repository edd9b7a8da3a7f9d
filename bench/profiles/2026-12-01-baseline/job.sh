#!/usr/bin/env bash
# timeout: 230
# Baseline ncu profiles of the issue-15 misses, each next to its same-run reference.
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
for t in softmax_long matmul_bf16_4096 attn_fwd_d128_full_n1024 attn_fwd_d128_causal_n1024 attn_fwd_d64_full_n4096 attn_bwd_d128_causal_n4096 attn_bwd_d64_full_n4096; do
  s=$(date +%s)
  timeout 60 ncu --clock-control none --profile-from-start off --csv --page details \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    python3 bench/profile_kernels.py $t > "$JOB_OUT/ncu_$t.csv" 2> "$JOB_OUT/ncu_$t.err"
  echo "$t rc=$? $(( $(date +%s) - s ))s $(wc -l < $JOB_OUT/ncu_$t.csv) lines"
done
