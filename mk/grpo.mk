# GRPO with verl from a recipe file (GPU: vLLM rollout; CPU or no vLLM: the transformers rollout, verl/main_ppo.sh), plus what every training target shares:
# the run-name scheme, the logging switch and the CPU-safe settings.
#   make grpo-verl MODEL=Qwen/Qwen2.5-VL-7B-Instruct          # recipes/qwen2_5_vl_7b/grpo/config_guir1_verl.yaml
#   make grpo-verl GRPO_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml ARGS="trainer.n_gpus_per_node=4"
# ARGS takes any hydra override of verl's config. DRY_RUN=1: compose, validate and load data/reward as verl's entry
# point does, print the values that matter, no training (verl/dry_run.py; CPU).

# recipes/<model>/... folder of a Hub id: Qwen/Qwen2.5-VL-3B-Instruct -> qwen2_5_vl_3b
# (make functions only: MODEL never reaches a shell, mk/shell.mk)
#: the recipes/ folder of MODEL: its Hub name lower-cased, -Instruct dropped, - and . as _
#: (Qwen/Qwen2.5-VL-3B-Instruct: qwen2_5_vl_3b). Set it to use a family's recipes with a local model folder of another
#: name.
RECIPE_MODEL ?= $(subst .,_,$(subst -,_,$(call lc,$(patsubst %-Instruct,%,$(notdir $(MODEL))))))
# Environment knobs of verl/main_ppo.sh, the launcher of grpo-verl and grpo-verl-agent (make passes them on):
#:env ROLLOUT_ENGINE make grpo-verl / grpo-verl-agent: vllm, sglang or hf (transformers); unset: hf on the CPU or without vLLM, else vllm; verl/main_ppo.sh.
#:env VERL_PLATFORM make grpo-verl / grpo-verl-agent: the verl platform (nvidia, npu, cpu); unset: cpu where no GPU or NPU is found; verl/main_ppo.sh.
#:env CPU_WORKERS make grpo-verl / grpo-verl-agent on the CPU: training processes (1); verl/main_ppo.sh.
#:env CPU_RESPONSE_LENGTH make grpo-verl on the CPU: the response token budget (128); verl/main_ppo.sh.
#: make grpo-verl: the verl recipe (a hydra config file).
GRPO_RECIPE ?= recipes/$(RECIPE_MODEL)/grpo/config_guir1_verl.yaml
#: make grpo-verl: the folder with train.parquet and test.parquet of the verl export.
VERL_DATA ?= $(or $(DATA_ROOT),Data)/verl/$(DATASET)
#: extra arguments appended to the training command: hydra overrides for grpo-verl and grpo-verl-agent, --flag value
#: for grpo-trl, grpo-swift and sft-swift, key=value for sft-llamafactory. They win over the recipe and the CPU-safe
#: settings.
ARGS ?=
#: 1: make grpo-verl / grpo-verl-agent compose and check the run (config, data, reward, loop) and print the values
#: that matter, without training (CPU).
DRY_RUN ?=

# Logging, one switch for every recipe: LOGGER=console (default) | tensorboard | wandb. Every backend names the
# run RUN_NAME (<model>_<recipe>_<backend>) and TensorBoard files go to $(LOG_ROOT)/<run name>; WANDB_MODE=offline
# logs W&B with no network (sync later with `wandb sync`).
#: where training metrics go: console, tensorboard (files under LOG_ROOT) or wandb.
LOGGER ?= console
#: the folder of TensorBoard runs, one sub-folder per run name (<model>_<recipe>).
LOG_ROOT ?= runs
run_name = $(RECIPE_MODEL)_$(patsubst config_%,%,$(basename $(notdir $(1))))
# trl / ms-swift / LLaMA-Factory take transformers' --report_to (none = console only).
report_to = $(if $(filter console,$(LOGGER)),none,$(LOGGER))
#: the Weights & Biases project with LOGGER=wandb.
export WANDB_PROJECT ?= gui-agent

# CPU-safe settings (a machine without a CUDA GPU): fp32 and dataloader workers 0 (data loads in the trainer
# process, so never more workers than cores); each target prints one line saying so. ARGS still wins.
#: 1 when nvidia-smi finds a GPU, else empty: picks GPU or CPU-safe settings. HAS_CUDA= forces the CPU settings,
#: HAS_CUDA=1 the GPU ones (what make -n shows).
HAS_CUDA ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
cpu_note = @$(if $(HAS_CUDA),true,echo "$(1): no CUDA GPU found: CPU-safe settings (fp32, dataloader workers 0); ARGS overrides them")
# GPU-only targets: one line and exit 2 on a machine without CUDA. $(1) target, $(2) why, and what runs on CPU.
gpu_only = @$(if $(HAS_CUDA),true,{ echo "$(1) needs an NVIDIA GPU and nvidia-smi finds none here ($(2))"; exit 2; })

# What a trl / ms-swift GRPO target checks before training: its model (mk/models.mk), data and recipe exist, and
# the CPU note.
# $(1) target, $(2) data path, $(3) `test` flag for it (-f file, -d folder), $(4) export format (--to), $(5) data
# variable, $(6) recipe path, $(7) recipe variable, $(8) backend (recipe files are recipes/*/grpo/*_<backend>.yaml).
define grpo_preflight
	$(call need_one_of,LOGGER,$(1),console tensorboard wandb)
	$(call model_preflight,$(1),$(MODEL),MODEL)
	@test $(3) $(call q,$(2)) || { echo "$(1): "$(call q,$(2))" not found (export it with --to $(4), or set $(5)=)"; exit 2; }
	@test -f $(call q,$(6)) || { echo "$(1): recipe "$(call q,$(6))" not found (ls recipes/*/grpo/*_$(8).yaml; set $(7)=)"; exit 2; }
	$(call cpu_note,$(1))
endef

.PHONY: grpo-verl
grpo-verl: $(VENVS)/rl/.ready
	$(call need_one_of,LOGGER,grpo-verl,console tensorboard wandb)
	$(call model_preflight,grpo-verl,$(MODEL),MODEL)
	@test -f $(call q,$(GRPO_RECIPE)) || { echo "grpo-verl: recipe "$(call q,$(GRPO_RECIPE))" not found (ls recipes/*/grpo/; set GRPO_RECIPE=)"; exit 2; }
	$(RL)/python -m core.recipes check-reward $(call q,$(GRPO_RECIPE))
	TENSORBOARD_DIR=$(call q,$(LOG_ROOT)/$(call run_name,$(GRPO_RECIPE))) WHO=grpo-verl DRY_RUN=$(call q,$(DRY_RUN)) \
	PYTHON=$(call q,$(CURDIR)/$(RL)/python) bash verl/main_ppo.sh $(call q,--config-path=$(CURDIR)/$(dir $(GRPO_RECIPE))) \
		$(call q,--config-name=$(basename $(notdir $(GRPO_RECIPE)))) \
		$(call q,actor_rollout_ref.model.path=$(MODEL)) \
		$(call q,data.train_files=$(VERL_DATA)/train.parquet) $(call q,data.val_files=$(VERL_DATA)/test.parquet) \
		reward.custom_reward_function.path=$(CURDIR)/verl/reward_fn.py \
		'trainer.logger=[console$(if $(filter console,$(LOGGER)),,$(comma)$(LOGGER))]' \
		$(call q,trainer.experiment_name=$(call run_name,$(GRPO_RECIPE))) \
		trainer.v1.trainer_mode=gui_agent +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=gui_agent_trainer.register \
		-- $(call qwords,$(ARGS))

comma := ,
