#!/bin/bash
# timeout: 120
# bwd (issue 15): TMA variants of the backward (Q/dO tiles by TMA, dQ by one bulk reduction per tile) vs
# the split default and cuDNN; host cost per launch; ncu of the fused TMA candidate at d128 causal.
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
s=$(date +%s)
timeout 70 python3 bench/attention_backward_sweep.py variants "$JOB_OUT" 2>&1 | grep -v "^{" | tail -n 40
echo "variants rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 15 python3 bench/attention_backward_sweep.py launch
echo "launch rc=$? $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 25 ncu --clock-control none --profile-from-start off --csv --page details \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,gpu__time_duration.sum \
  python3 bench/attention_backward_sweep.py profile F4T 128 causal > "$JOB_OUT/ncu_F4T_d128_causal.csv" 2> "$JOB_OUT/ncu_F4T.err"
echo "ncu rc=$? $(( $(date +%s) - s ))s"
