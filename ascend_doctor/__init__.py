"""ascend-doctor: will this Ascend NPU + vllm-ascend stack serve, and if not, what exactly to change."""

__version__ = "0.1.0"
