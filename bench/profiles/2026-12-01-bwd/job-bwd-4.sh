#!/bin/bash
# timeout: 150
# bwd (issue 15): backward candidates (split vs fused atomic-dQ, new tiles) vs cuDNN, GPU correctness,
# the fixed per-call cost, GPU tests of both designs, ncu of the fused d128 causal candidate.
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
s=$(date +%s)
timeout 60 python3 bench/attention_backward_sweep.py variants "$JOB_OUT" 2>&1 | tail -n 60
echo "variants rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 20 python3 bench/attention_backward_sweep.py overhead "$JOB_OUT"
echo "overhead rc=$? $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 20 ncu --clock-control none --profile-from-start off --csv --page details \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics smsp__sass_inst_executed_op_local_ld.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,lts__t_sectors_op_red.sum,gpu__time_duration.sum \
  python3 bench/attention_backward_sweep.py profile F1 128 causal > "$JOB_OUT/ncu_F1_d128_causal.csv" 2> "$JOB_OUT/ncu_F1.err"
echo "ncu rc=$? $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 45 python3 -m pytest -q -p no:cacheprovider -m gpu -n 8 -x tests/kernels/test_flash_attention_bwd.py 2>&1 | tail -n 25
echo "pytest rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s"
