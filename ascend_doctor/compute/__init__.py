"""The compute smoke (`--compute`): before a model loads, prove every NPU computes right at the speed of its peers and
that the NPUs can all-reduce — in child processes of the serving interpreter, bounded in time, nothing left running.

- `rank`: the script each rank runs (HBM touch, matmul per dtype against a CPU reference, the fused operators
  vllm-ascend calls at start, an all-reduce with its bus bandwidth). It prints what it did step by step, so a crash or
  a hang still leaves how far it got.
- `launcher`: the one command the doctor runs (through the host seam, so it records and replays like any probe). It
  starts the ranks, reads their steps, stops the survivors when the collective can no longer form, and prints one
  JSON record of every rank.
- `facts`: that record, typed, and what each rank's ending means (done, crashed, hung, missing, stopped).
- `policy`: the thresholds (the `compute/compute-smoke` table), each with its source.

The doctor itself never imports torch: only the children do.
"""
