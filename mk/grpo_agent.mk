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
# Environment knobs of the run scripts (verl/gui_agent/run_gui_agent.sh; make passes them on):
#:env TRAIN_BATCH_SIZE make grpo-verl-agent: prompts per step (512 GPU, 256 NPU, 2 CPU); verl/gui_agent/run_gui_agent.sh.
#:env PPO_MINI_BATCH_SIZE make grpo-verl-agent: PPO mini batch (128; 2 CPU); verl/gui_agent/run_gui_agent.sh.
#:env MICRO_BATCH make grpo-verl-agent: ppo / log-prob micro batch per device (1; lower it on out-of-memory); verl/gui_agent/run_gui_agent.sh.
#:env ROLLOUT_N make grpo-verl-agent: the GRPO group size (5; 2 CPU); verl/gui_agent/run_gui_agent.sh.
#:env KL_LOSS_COEF make grpo-verl-agent: the KL loss coefficient (0.01); verl/gui_agent/run_gui_agent.sh.
#:env LR make grpo-verl-agent: the actor learning rate (1e-6); verl/gui_agent/run_gui_agent.sh.
#:env MAX_PROMPT_LENGTH make grpo-verl-agent: the prompt token budget (8192); verl/gui_agent/run_gui_agent.sh.
#:env MAX_RESPONSE_LENGTH make grpo-verl-agent: the response token budget of an episode (16384; 2048 CPU); verl/gui_agent/run_gui_agent.sh.
#:env TP the vLLM tensor parallel size: make grpo-verl-agent's rollout (2 GPU, 4 NPU) and make infer (1); the run scripts and experiments/guir1/inference.sh.
#:env PARAM_OFFLOAD make grpo-verl-agent: True offloads FSDP parameters and optimizer to the CPU; verl/gui_agent/run_gui_agent.sh.
#:env CHUNKED_PREFILL make grpo-verl-agent: vLLM chunked prefill (True); verl/gui_agent/run_gui_agent.sh.
#:env ENFORCE_EAGER make grpo-verl-agent: True turns vLLM's CUDA graphs off; verl/gui_agent/run_gui_agent.sh.
#:env GPU_MEMORY_UTILIZATION make grpo-verl-agent: vLLM's share of GPU memory (0.6); verl/gui_agent/run_gui_agent.sh.
#:env EPOCHS make grpo-verl-agent: passes over the data (15; 1 CPU); verl/gui_agent/run_gui_agent.sh.
#:env NNODES make grpo-verl-agent: nodes of the Ray cluster (1); verl/gui_agent/run_gui_agent.sh.
#:env N_GPUS make grpo-verl-agent: GPUs per node (8; 1 CPU); verl/gui_agent/run_gui_agent.sh.
#:env PRINT_ARGS make grpo-verl-agent: 1 prints the hydra overrides, one a line, and exits; verl/gui_agent/run_gui_agent.sh.
#: make gui-agent-data writes, make grpo-verl-agent reads: the folder of the agent's train.parquet and test.parquet.
AGENT_DATA ?= $(or $(DATA_ROOT),Data)/gui_agent
#: make grpo-verl-agent: gpu, npu or cpu (picks verl/examples/run_qwen3_vl_8b_gui_agent_<device>.sh).
AGENT_DEVICE ?= gpu
#: make gui-agent-data: how many simulated-phone demo rows to write.
AGENT_DEMO_SAMPLES ?= 1000
#: the agent recipe file (grid, turns, screenshots, prompt) that data preparation and training both read.
AGENT_RECIPE ?= verl/gui_agent/recipe.yaml
# The project-wide MODEL default is a Qwen2.5-VL; this recipe's model family is Qwen3-VL.
AGENT_MODEL = $(if $(call given,MODEL),$(MODEL),Qwen/Qwen3-VL-8B-Instruct)

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
