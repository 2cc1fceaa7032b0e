# GRPO with trl's GRPOTrainer (VLM-R1 style) on the vlmr1 export (`make data` writes Data/vlmr1/$(DATASET).hf), with
# a trl --config recipe (recipes/<model>/grpo/config_*_trl.yaml; flags in ARGS win over it):
#   make grpo-trl MODEL=Qwen/Qwen2.5-VL-3B-Instruct                          # config_guir1_trl.yaml (8 GPUs)
#   make grpo-trl TRL_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_trl_1gpu.yaml   # one 80 GB GPU
#   make grpo-trl TRL_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_vlmr1_trl.yaml        # VLM-R1's REC defaults
# ARGS takes any GRPOConfig flag (--max_steps 100, --num_generations 4 ...). Multi-GPU: VLM-R1/run_scripts/run_grpo_gui.sh.
#: make grpo-trl: the trl --config recipe.
TRL_RECIPE ?= recipes/$(RECIPE_MODEL)/grpo/config_guir1_trl.yaml
#: make grpo-trl: the vlmr1 export (a datasets folder, <name>.hf).
TRL_DATA ?= $(or $(DATA_ROOT),Data)/vlmr1/$(DATASET).hf
# Runs are saved under the data's own name (aitz.hf -> saves/<model>/aitz/grpo-trl).
#: make grpo-trl: the output folder, saves/<model folder>/<data name>/grpo-trl.
TRL_OUTPUT ?= saves/$(notdir $(MODEL))/$(basename $(notdir $(TRL_DATA)))/grpo-trl
TRL_CPU_ARGS = --bf16 false --use_cpu true --use_vllm false --dataloader_num_workers 0
ARGS ?=

.PHONY: grpo-trl
grpo-trl: $(VENVS)/rl/.ready
	$(call grpo_preflight,grpo-trl,$(TRL_DATA),-d,vlmr1,TRL_DATA,$(TRL_RECIPE),TRL_RECIPE,trl)
	TENSORBOARD_LOGGING_DIR=$(call q,$(LOG_ROOT)/$(call run_name,$(TRL_RECIPE))) \
	$(RL)/python VLM-R1/grpo.py --config $(call q,$(TRL_RECIPE)) --model_name_or_path $(call q,$(MODEL)) \
		--dataset $(call q,$(TRL_DATA)) --output_dir $(call q,$(TRL_OUTPUT)) --report_to $(report_to) \
		--run_name $(call q,$(call run_name,$(TRL_RECIPE))) $(call qwords,$(if $(HAS_CUDA),,$(TRL_CPU_ARGS)) $(ARGS))
