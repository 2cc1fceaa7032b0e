# GRPO with ms-swift (`swift rlhf RECIPE.yaml`) on the swift export (`make data` writes Data/swift/$(DATASET).jsonl),
# rewards from core.rewards through ms-swift/plugin/gui_rewards.py; every training value is in the recipe:
#   make grpo-swift MODEL=Qwen/Qwen2.5-VL-3B-Instruct                  # recipes/<model>/grpo/config_guir1_swift.yaml
#   make grpo-swift SWIFT_GRPO_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_vlmr1_swift.yaml NPROC_PER_NODE=8
# ARGS is appended to `swift rlhf` (--flag value; later flags win), e.g. ARGS="--max_steps 100".
#:env NPROC_PER_NODE make grpo-swift / sft-swift: processes (GPUs) per node of ms-swift's torchrun.
#:env MAX_PIXELS make grpo-swift / sft-swift: the image pixel cap of ms-swift's Qwen-VL processor.
#: make grpo-swift: the ms-swift recipe (swift rlhf YAML).
SWIFT_GRPO_RECIPE ?= recipes/$(RECIPE_MODEL)/grpo/config_guir1_swift.yaml
#: make grpo-swift: the swift export (a JSONL file).
SWIFT_GRPO_DATA ?= $(or $(DATA_ROOT),Data)/swift/$(DATASET).jsonl
#: make grpo-swift: ms-swift's chat template, from MODEL's family (qwen3_vl for Qwen3-VL, else qwen2_5_vl).
SWIFT_GRPO_TEMPLATE ?= $(if $(findstring Qwen3-VL,$(MODEL)),qwen3_vl,qwen2_5_vl)
#: make grpo-swift: the output folder, saves/<model folder>/<data name>/grpo-swift.
SWIFT_GRPO_OUTPUT ?= saves/$(notdir $(MODEL))/$(basename $(notdir $(SWIFT_GRPO_DATA)))/grpo-swift
# Every swift target reads models through the Hugging Face hub/cache (HF_HUB_OFFLINE applies), never ModelScope.
SWIFT_HUB_ARGS = --use_hf true
SWIFT_CPU_ARGS = --torch_dtype float32 --bf16 false --dataloader_num_workers 0 --dataset_num_proc 1
# On CUDA machines rollouts use vLLM inside the training processes (set SWIFT_GRPO_GPU_ARGS= for transformers generate).
#: make grpo-swift on a CUDA machine: rollout options (vLLM colocated in the training processes); empty: transformers
#: generate.
SWIFT_GRPO_GPU_ARGS ?= --use_vllm true --vllm_mode colocate
SWIFT_LOG_ARGS = --report_to $(report_to)
ARGS ?=

.PHONY: grpo-swift
grpo-swift: $(VENVS)/rl/.ready
	$(call grpo_preflight,grpo-swift,$(SWIFT_GRPO_DATA),-f,swift,SWIFT_GRPO_DATA,$(SWIFT_GRPO_RECIPE),SWIFT_GRPO_RECIPE,swift)
	TENSORBOARD_LOGGING_DIR=$(call q,$(LOG_ROOT)/$(call run_name,$(SWIFT_GRPO_RECIPE))) \
	RECIPE=$(call q,$(SWIFT_GRPO_RECIPE)) MODEL=$(call q,$(MODEL)) DATASET=$(call q,$(SWIFT_GRPO_DATA)) \
		TEMPLATE=$(call q,$(SWIFT_GRPO_TEMPLATE)) OUTPUT_DIR=$(call q,$(SWIFT_GRPO_OUTPUT)) \
		SWIFT=$(RL)/swift bash ms-swift/examples/grpo.sh $(call qwords,$(SWIFT_HUB_ARGS) $(SWIFT_LOG_ARGS) \
		$(if $(HAS_CUDA),$(SWIFT_GRPO_GPU_ARGS),$(SWIFT_CPU_ARGS)) $(ARGS))
