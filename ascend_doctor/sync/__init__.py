"""`ascend-doctor matrix sync`: read upstream release files (a vllm-ascend checkout or sdist, vLLM sdists or wheels,
transformers wheels, PyPI JSON metadata saved to disk) and propose matrix rows, with their sources, as a diff
against the shipped TOML. A maintainer's tool: it never touches the network, and nothing it reads is executed
(Python sources are parsed with `ast`, archives are read member by member).

  archive.py   a directory, .tar.gz or .zip/.whl as `read(path)` / `listdir(path)` callables
  vllm.py      one vLLM release: parser / reasoning / tokenizer registries, model registry, torch pin
  ascend.py    vllm-ascend: the official release table (versioning_policy.md) and one release's own pins
  hf.py        transformers: the model_types one release knows
  diff.py      extracted facts against the shipped matrix, as proposed rows
"""
