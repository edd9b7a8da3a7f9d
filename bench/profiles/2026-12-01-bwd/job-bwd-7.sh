#!/bin/bash
# timeout: 150
# bwd (issue 15), final: record the attention_backward family at every target shape (fp16: d 64/128 x
# N 1K-16K x full/causal; bf16 at N = 4096) with cuDNN as the reference, then the "after" ncu profile of
# the default backward at d128 causal N4K (the lead's "before" shape) and the per-kernel summary.
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
s=$(date +%s)
timeout 25 python3 bench/attention_backward_sweep.py precompile
echo "precompile rc=$? $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 95 python3 bench/run.py attention_backward --name attention_backward_targets_h200 \
  --option "dtypes=('fp16', 'bf16')" --option "bf16_seq_lens=(4096,)" \
  --out-dir "$JOB_OUT" --warmup-ms 5 --rep-ms 20 --no-progress
echo "family rc=$? $(( $(date +%s) - s ))s"; s=$(date +%s)
timeout 20 ncu --clock-control none --profile-from-start off --csv --page details \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,gpu__time_duration.sum \
  python3 bench/attention_backward_sweep.py profile default 128 causal > "$JOB_OUT/ncu_after_d128_causal.csv" 2> "$JOB_OUT/ncu_after.err"
echo "ncu rc=$? $(( $(date +%s) - s ))s"
python3 bench/attention_backward_sweep.py collect "$JOB_OUT" \
  before=bench/profiles/2026-12-01-baseline/ncu_attn_bwd_d128_causal_n4096.csv \
  fused_f1=bench/profiles/2026-12-01-bwd/ncu_F1_d128_causal.csv \
  fused_tma=bench/profiles/2026-12-01-bwd/ncu_F4T_d128_causal.csv \
  after="$JOB_OUT/ncu_after_d128_causal.csv" | tail -n 3
s=$(date +%s)
timeout 25 python3 -m pytest -q -p no:cacheprovider -m gpu -n 12 -k "fp32 or default" tests/kernels/test_flash_attention_bwd.py 2>&1 | grep -v "PytestBenchmarkWarning\|warner(" | tail -n 6
echo "pytest fp32+default rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s"
