"""config.json fields of published models, for the deployment-model tests (only the fields sizing reads).

Sources (copies of the official config.json found in public repositories; see docs/research/deploy-facts.md):
- Qwen3-8B/32B/30B-A3B/235B-A22B, DeepSeek-V3, gpt-oss-120b: ai-dynamo/aiconfigurator @095f58a5 (model configs)
- QwQ-32B: a model-info report of the checkpoint ("原始 config.json"), cross-checked with
  https://huggingface.co/unsloth/QwQ-32B/blob/403266f19437562e1152ca719315275081826623/config.json
- Qwen3-14B: a re-saved copy (architecture values; exact parameter count 14,768,307,200 in the same report)
- SmolLM2-135M-Instruct: the checkpoint the vllm-cpu tier serves (HuggingFaceTB/SmolLM2-135M-Instruct)
"""

QWEN3_8B = dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], num_hidden_layers=36, hidden_size=4096,
                intermediate_size=12288, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                vocab_size=151936, tie_word_embeddings=False, torch_dtype="bfloat16", max_position_embeddings=40960)
QWEN3_14B = dict(model_type="qwen3", num_hidden_layers=40, hidden_size=5120, intermediate_size=17408,
                 num_attention_heads=40, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                 tie_word_embeddings=False, torch_dtype="bfloat16", max_position_embeddings=40960)
QWEN3_32B = dict(model_type="qwen3", num_hidden_layers=64, hidden_size=5120, intermediate_size=25600,
                 num_attention_heads=64, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                 tie_word_embeddings=False, torch_dtype="bfloat16", max_position_embeddings=40960)
QWQ_32B = dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=5120, intermediate_size=27648,
               max_position_embeddings=131072, max_window_layers=64, num_attention_heads=40, num_hidden_layers=64,
               num_key_value_heads=8, sliding_window=32768, tie_word_embeddings=False, torch_dtype="bfloat16",
               use_sliding_window=False, vocab_size=152064)
QWEN3_30B_A3B = dict(model_type="qwen3_moe", num_hidden_layers=48, hidden_size=2048, intermediate_size=6144,
                     moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8, decoder_sparse_step=1,
                     mlp_only_layers=[], num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                     vocab_size=151936, tie_word_embeddings=False, torch_dtype="bfloat16",
                     max_position_embeddings=40960)
QWEN3_235B = dict(model_type="qwen3_moe", num_hidden_layers=94, hidden_size=4096, intermediate_size=12288,
                  moe_intermediate_size=1536, num_experts=128, num_experts_per_tok=8, decoder_sparse_step=1,
                  mlp_only_layers=[], num_attention_heads=64, num_key_value_heads=4, head_dim=128,
                  vocab_size=151936, tie_word_embeddings=False, torch_dtype="bfloat16",
                  max_position_embeddings=40960)
DEEPSEEK_V3 = dict(model_type="deepseek_v3", architectures=["DeepseekV3ForCausalLM"], num_hidden_layers=61,
                   hidden_size=7168, vocab_size=129280, num_attention_heads=128, num_key_value_heads=128,
                   q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
                   intermediate_size=18432, moe_intermediate_size=2048, n_routed_experts=256, n_shared_experts=1,
                   num_experts_per_tok=8, first_k_dense_replace=3, moe_layer_freq=1, num_nextn_predict_layers=1,
                   torch_dtype="bfloat16", max_position_embeddings=163840)
SMOLLM2_135M = dict(model_type="llama", architectures=["LlamaForCausalLM"], head_dim=64, hidden_size=576,
                    intermediate_size=1536, max_position_embeddings=8192, num_attention_heads=9,
                    num_hidden_layers=30, num_key_value_heads=3, tie_word_embeddings=True, vocab_size=49152,
                    dtype="float32")
GPT_OSS_120B = dict(model_type="gpt_oss", num_hidden_layers=36, hidden_size=2880, intermediate_size=2880,
                    num_local_experts=128, num_experts_per_tok=4, num_attention_heads=64, num_key_value_heads=8,
                    head_dim=64, vocab_size=201088, sliding_window=128, tie_word_embeddings=False,
                    layer_types=["sliding_attention", "full_attention"] * 18, max_position_embeddings=131072,
                    torch_dtype="bfloat16", quantization_config={"quant_method": "mxfp4"})
