"""ascend_doctor.sync.tutorials: the server starts a release's tutorial pages show, with their environment and
hardware. The page below is written here in the shapes vllm-ascend's docs use (docs/source/tutorials/models/*.md of
the 0.23.0 and 0.30.0rc2 sdists: mkdocs tabs with indented blocks, shell assignments feeding exports, a Node0/Node1
pair, a 300I Duo section, a `python -m vllm.entrypoints.openai.api_server` start, a trailing `&`)."""

from __future__ import annotations

from ascend_doctor.sync.tutorials import model_of, read_tutorial

PAGE = '''# Some-Model

## Deployment

- `Some-Model-w8a8` can be deployed on 1 Atlas 800 A3 (64GB × 16).

```shell
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# Ensure the model path matches
vllm serve /root/.cache/Some-Model-w8a8 --additional-config '{"enable_mlapo":true}' \\
  --tensor-parallel-size 16 \\
  --gpu-memory-utilization 0.92
```

### Multi-node

Run the following scripts on two nodes respectively.

=== "A2 series"

    **Node0**

    ```bash
    nic_name="eth9"
    local_ip="10.0.0.2"
    export HCCL_IF_IP=$local_ip
    export GLOO_SOCKET_IFNAME=${nic_name}
    vllm serve /root/.cache/Some-Model-w8a8 \\
      --data-parallel-size 2 --data-parallel-size-local 1 \\
      --data-parallel-address $local_ip --data-parallel-rpc-port $port \\
      --tensor-parallel-size 8 > node0.log 2>&1 &
    ```

## Atlas 300I Duo

```bash
export ASCEND_RT_VISIBLE_DEVICES=0,1
```

Then start the server:

```bash
python -m vllm.entrypoints.openai.api_server --model /models/Small-310 --dtype float16 -tp 2 &
```
'''


def test_reads_each_start_with_its_environment_and_hardware():
    a, b, c = read_tutorial(PAGE, "docs/source/tutorials/models/Some-Model.md")
    assert a.chip == "A3" and a.line == 11 and not a.multi_node
    assert a.env == {"HCCL_BUFFSIZE": "200", "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    assert a.argv[:3] == ["vllm", "serve", "/root/.cache/Some-Model-w8a8"]
    assert a.argv[3:5] == ["--additional-config", '{"enable_mlapo":true}']  # the shell's quoting removed
    assert a.argv[-2:] == ["--gpu-memory-utilization", "0.92"]

    # the tab's label names the hardware; the block's own assignments expand; $port is never assigned
    assert b.chip == "A2" and b.multi_node and b.heading == "Multi-node"
    # a tab is an alternative, not a step: only the tab's own exports (not the A3 block's above it)
    assert b.env == {"HCCL_IF_IP": "10.0.0.2", "GLOO_SOCKET_IFNAME": "eth9"}
    # an environment block, then the command in the next one: the reader's shell carries the export; a new
    # top-level section starts a new shell (nothing of the sections above)
    assert c.env == {"ASCEND_RT_VISIBLE_DEVICES": "0,1"}
    assert "10.0.0.2" in b.argv and "$port" in b.argv and b.unresolved == ["port"]
    assert b.argv[-2:] == ["--tensor-parallel-size", "8"]  # the redirection and `&` are the shell's

    assert c.chip == "310P" and c.argv[-2:] == ["-tp", "2"] and model_of(c) == "/models/Small-310"
    assert model_of(a) == "/root/.cache/Some-Model-w8a8"


def test_prose_and_broken_blocks_give_nothing():
    page = "Run `vllm serve MODEL` as usual.\n\n```bash\nvllm serve /m --hf-overrides '{\"a\": 1\n```\n"
    assert read_tutorial(page, "x.md") == []  # a command in prose, and one whose quote never closes
    assert read_tutorial("```\nunclosed fence\nvllm serve /m\n", "y.md")[0].argv == ["vllm", "serve", "/m"]


TABS = '''## Single node

The model can be deployed on 1 Atlas 800 A3 (64GB × 16) or 1 Atlas 800 A2 (64GB × 8), and on 950DT products.

=== "A2 series"

    ```bash
    vllm serve /models/M-w8a8 --tensor-parallel-size 8 --quantization ascend
    ```

=== "950DT products"

    The MXFP8 weights:

    ```bash
    vllm serve /models/M-MXFP8 --tensor-parallel-size 4 --quantization mxfp8
    ```

Back at the margin: the section's prose again.

```bash
vllm serve /models/M-w8a8 --tensor-parallel-size 16
```

::::{tab-set}
:::{tab-item} A3
Unindented prose inside a MyST tab.

```bash
vllm serve /models/M-w8a8 -tp 16
```
:::
::::
'''


def test_a_command_in_a_tab_is_for_the_tabs_chips_only():
    """vllm-ascend 0.30.0rc2 MiniMax-M3.md:239: the 950DT tab's `--quantization mxfp8` beside the A2/A3 tabs."""
    a2, a5, untabbed, myst = read_tutorial(TABS, "docs/source/tutorials/models/M.md")
    assert a2.chips == ["A2"] and a5.chips == ["A5"]
    assert untabbed.chips == ["A3", "A2", "A5"]  # the section's own prose, once the tabs are over
    assert myst.chips == ["A3"]
