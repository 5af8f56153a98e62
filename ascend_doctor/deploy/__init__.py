"""The deployment model behind `ascend-doctor plan` (#24): what a model needs (weights, KV cache per token, the
parallel layouts it admits) and what a chip gives (HBM per rank), computed from the model's own files and sourced
tables — pure functions of data, no host access, so `plan`, the serve lint (SERVE203/302/305) and the tests share one
arithmetic.

- `arch`: the architecture read from config.json (attention kind, heads, MLA ranks, MoE experts, windows)
- `weights`: checkpoint bytes (index total_size, safetensors headers, else a parameter count from the config)
- `kv`: KV-cache bytes per token and per request, after vLLM V1's page-size formulas
- `chips`: the chip table (HBM per rank, torch-visible total, dtypes), each row sourced
- `budget`: one rank's memory budget at --gpu-memory-utilization and what it leaves for the KV cache
- `plan`: the layouts vLLM admits, each sized; the choice; the alternatives when nothing fits
- `template`, `toolparser`: what the chat template writes, and the parsers that read it
- `command`, `container`: the `vllm serve` command and the `docker run` around it
- `release`: the vllm-ascend release to install (architecture, driver)
- `catalogue`, `modeldir`: where a model's files come from (shipped catalogue, a local directory)
- `report`: the plan as a document (JSON, schema)
"""
