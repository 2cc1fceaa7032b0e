# verl's GUI-agent recipe (Qwen3-VL mobile_use agent, multi-turn GRPO; GPU or Ascend NPU with vLLM, or the CPU with
# the transformers rollout: AGENT_DEVICE=cpu, verl/examples/run_qwen3_vl_8b_gui_agent_cpu.sh):
#   make gui-agent-data                                    # AGENT_DATA=Data/gui_agent from the simulated phone
#   make grpo-verl-agent MODEL=Qwen/Qwen3-VL-8B-Instruct   # verl/examples/run_qwen3_vl_8b_gui_agent_gpu.sh
#   make grpo-verl-agent MODEL=... AGENT_DEVICE=npu ARGS="trainer.save_freq=20"
#   make grpo-verl-agent AGENT_DEVICE=cpu MODEL=<tiny Qwen3-VL folder> ARGS="trainer.total_training_steps=2"
#   make grpo-verl-agent DRY_RUN=1 MODEL=<path>           # CPU: compose + validate + load data, tool, loop; no training
#   ROLLOUT_ENGINE=sglang make grpo-verl-agent ...         # vllm (default where installed) | sglang | hf
# Knobs of the scripts are environment variables (TRAIN_BATCH_SIZE, ROLLOUT_N, TP, MICRO_BATCH, PARAM_OFFLOAD,
# CHUNKED_PREFILL, ENFORCE_EAGER, ...); ARGS takes hydra overrides of verl's config. Grid, turns, screenshots and
# prompt come from the agent recipe file AGENT_RECIPE (data prep and training alike; gui-agent rollout --recipe).
AGENT_DATA ?= $(or $(DATA_ROOT),Data)/gui_agent
AGENT_DEVICE ?= gpu
AGENT_DEMO_SAMPLES ?= 1000
AGENT_RECIPE ?= verl/gui_agent/recipe.yaml
# The project-wide MODEL default is a Qwen2.5-VL; this recipe's model family is Qwen3-VL.
AGENT_MODEL = $(if $(filter command line environment,$(origin MODEL)),$(MODEL),Qwen/Qwen3-VL-8B-Instruct)

.PHONY: gui-agent-data grpo-verl-agent
gui-agent-data: $(VENVS)/rl/.ready
	$(RL)/python verl/prepare_gui_agent_data.py --output_dir $(call q,$(AGENT_DATA)) --create_demo \
		--demo_samples $(call q,$(AGENT_DEMO_SAMPLES)) --recipe $(call q,$(AGENT_RECIPE))

grpo-verl-agent: $(VENVS)/rl/.ready
	$(call need_one_of,AGENT_DEVICE,grpo-verl-agent,gpu npu cpu)$(call need_one_of,LOGGER,grpo-verl-agent,console tensorboard wandb)
	@test -f $(call q,$(AGENT_DATA)/train.parquet) || { echo "grpo-verl-agent: "$(call q,$(AGENT_DATA)/train.parquet)" not found (make gui-agent-data, or set AGENT_DATA=)"; exit 2; }
	$(call model_preflight,grpo-verl-agent,$(AGENT_MODEL),MODEL)
	MODEL_PATH=$(call q,$(AGENT_MODEL)) DATA_DIR=$(call q,$(AGENT_DATA)) RECIPE=$(call q,$(abspath $(AGENT_RECIPE))) LOGGER=$(LOGGER) PYTHON=$(call q,$(CURDIR)/$(RL)/python) DRY_RUN=$(call q,$(DRY_RUN)) WHO=grpo-verl-agent \
		bash verl/examples/run_qwen3_vl_8b_gui_agent_$(AGENT_DEVICE).sh $(call qwords,$(ARGS))
