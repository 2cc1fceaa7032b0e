# Supervised fine-tuning with LLaMA-Factory or ms-swift on the datasets written by the data export.
#   make sft-llamafactory MODEL=Qwen/Qwen2.5-VL-3B-Instruct DATASET=gui-r1-3k   # the seed's LoRA YAML (default)
#   make sft-llamafactory MODEL=Qwen/Qwen2.5-VL-7B-Instruct   # train_lora/qwen2_5_vl_7b_gui_lora_sft.yaml
#   make sft-llamafactory SFT_RECIPE=LLaMA-Factory/examples/train_full/qwen2_5_vl_full_sft.yaml MODEL=...
#   make sft-swift MODEL=Qwen/Qwen2.5-VL-3B-Instruct SWIFT_DATA=Data/swift/gui-r1-3k.jsonl
# ARGS is appended (LLaMA-Factory: key=value overrides; ms-swift: --flag value). LLaMA-Factory runs from inside
# LLaMA-Factory/ as the seed monorepo does (its YAMLs' relative paths resolve there). Logging: LOGGER (mk/grpo.mk).
# The LoRA YAML of MODEL's family and size, named as the GRPO recipes are (RECIPE_MODEL, mk/grpo.mk): a MODEL with
# no YAML (a local folder of another name) stops, naming the ones there are; SFT_RECIPE= picks any YAML.
SFT_LORA_DIR = LLaMA-Factory/examples/train_lora
#:env FORCE_TORCHRUN make sft-llamafactory: 1 makes llamafactory-cli launch through torchrun (multi-GPU; read by LLaMA-Factory).
#: make sft-llamafactory: the LLaMA-Factory YAML; by default the LoRA YAML of MODEL's family and size
#: (LLaMA-Factory/examples/train_lora/<RECIPE_MODEL>_gui_lora_sft.yaml).
SFT_RECIPE ?= $(SFT_LORA_DIR)/$(RECIPE_MODEL)_gui_lora_sft.yaml
# Qwen3-VL models need LLaMA-Factory's qwen3_vl templates; everything else here is Qwen2.5-VL.
#: make sft-llamafactory: LLaMA-Factory's template, from MODEL's family (qwen3_vl_nothink for Qwen3-VL, else
#: qwen2_vl).
SFT_LF_TEMPLATE ?= $(if $(findstring Qwen3-VL,$(MODEL)),qwen3_vl_nothink,qwen2_vl)
#: make sft-swift: ms-swift's template, from MODEL's family (qwen3_vl for Qwen3-VL, else qwen2_5_vl).
SFT_SWIFT_TEMPLATE ?= $(if $(findstring Qwen3-VL,$(MODEL)),qwen3_vl,qwen2_5_vl)
#: make sft-llamafactory: the output root, saves/<model folder>/<DATASET> (the run goes to its llamafactory/ folder).
SFT_OUTPUT ?= saves/$(notdir $(MODEL))/$(DATASET)
# ms-swift runs are saved under the data's own name (aitz.jsonl -> saves/<model>/aitz/swift-lora).
#: make sft-swift: the output folder, saves/<model folder>/<data name>/swift-<SWIFT_TUNER>.
SFT_SWIFT_OUTPUT ?= saves/$(notdir $(MODEL))/$(basename $(notdir $(SWIFT_DATA)))/swift-$(SWIFT_TUNER)
# Where the exports are: LLaMA-Factory reads $(SFT_LF_DATA_DIR)/dataset_info.json (written by the export);
# ms-swift reads one JSONL (the swift export's <output>/<name>.jsonl).
#: make sft-llamafactory: the folder of LLaMA-Factory's dataset_info.json (the llamafactory export writes it).
SFT_LF_DATA_DIR ?= $(or $(LF_DATA_DIR),LLaMA-Factory/data)
#: make sft-swift: the swift export (a JSONL file).
SWIFT_DATA ?= $(or $(DATA_ROOT),Data)/swift/$(DATASET).jsonl
#: make sft-swift: lora or full (ms-swift/examples/sft_<tuner>.sh).
SWIFT_TUNER ?= lora
# CPU-safe settings (no CUDA): fp32, no DeepSpeed, dataloader workers 0, one preprocessing process.
SFT_LF_CPU_ARGS = bf16=false deepspeed=null dataloader_num_workers=0 preprocessing_num_workers=1
ARGS ?=

.PHONY: sft-llamafactory sft-swift
sft-llamafactory: $(VENVS)/llamafactory/.ready $(VENVS)/rl/.ready
	$(call need_name,DATASET,sft-llamafactory)$(call need_one_of,LOGGER,sft-llamafactory,console tensorboard wandb)
	$(call model_preflight,sft-llamafactory,$(MODEL),MODEL)
	@test -f $(call q,$(SFT_RECIPE)) || { echo "sft-llamafactory: no LoRA recipe for MODEL="$(call q,$(MODEL))" ("$(call q,$(SFT_RECIPE))"); LoRA recipes are there for:" \
	  $$(ls $(SFT_LORA_DIR) | sed -n 's/_gui_lora_sft.yaml$$//p' | tr '\n' ' ')"- or set SFT_RECIPE=<yaml>"; exit 2; }
	@grep -qs '"$(DATASET)"[[:space:]]*:' $(call q,$(SFT_LF_DATA_DIR)/dataset_info.json) || { echo "sft-llamafactory: dataset" \
	  "$(DATASET) not in "$(call q,$(SFT_LF_DATA_DIR)/dataset_info.json)" (export it with --to llamafactory, or set DATASET= / SFT_LF_DATA_DIR=)"; exit 2; }
	$(call cpu_note,sft-llamafactory)
	cd LLaMA-Factory && TENSORBOARD_LOGGING_DIR=$(call q,$(abspath $(LOG_ROOT))/$(basename $(notdir $(SFT_RECIPE)))) \
	$(abspath $(LF))/llamafactory-cli train $(call q,$(abspath $(SFT_RECIPE))) $(call q,model_name_or_path=$(MODEL)) \
		dataset=$(DATASET) $(call q,dataset_dir=$(abspath $(SFT_LF_DATA_DIR))) $(call q,template=$(SFT_LF_TEMPLATE)) \
		$(call q,output_dir=$(abspath $(SFT_OUTPUT))/llamafactory) report_to=$(report_to) \
		$(call qwords,$(if $(HAS_CUDA),,$(SFT_LF_CPU_ARGS)) $(ARGS))

sft-swift: $(VENVS)/rl/.ready
	$(call need_name,SWIFT_TUNER,sft-swift)$(call need_one_of,LOGGER,sft-swift,console tensorboard wandb)
	$(call model_preflight,sft-swift,$(MODEL),MODEL)
	@test -f $(call q,$(SWIFT_DATA)) || { echo "sft-swift: "$(call q,$(SWIFT_DATA))" not found (export it with --to swift, or set SWIFT_DATA=)"; exit 2; }
	@test -f "ms-swift/examples/sft_$(SWIFT_TUNER).sh" || { echo "sft-swift: SWIFT_TUNER=$(SWIFT_TUNER): no" \
	  "ms-swift/examples/sft_$(SWIFT_TUNER).sh; SWIFT_TUNER is one of:" $$(ls ms-swift/examples | sed -n 's/^sft_\(.*\)\.sh$$/\1/p' | grep -v common); exit 2; }
	$(call cpu_note,sft-swift)
	TENSORBOARD_LOGGING_DIR=$(call q,$(LOG_ROOT)/$(RECIPE_MODEL)_sft_$(SWIFT_TUNER)_swift) \
	$(if $(HAS_CUDA),,DEEPSPEED=) MODEL=$(call q,$(MODEL)) DATASET=$(call q,$(SWIFT_DATA)) \
		TEMPLATE=$(call q,$(SFT_SWIFT_TEMPLATE)) OUTPUT_DIR=$(call q,$(SFT_SWIFT_OUTPUT)) \
		SWIFT=$(RL)/swift bash ms-swift/examples/sft_$(SWIFT_TUNER).sh $(call qwords,$(SWIFT_HUB_ARGS) $(SWIFT_LOG_ARGS) \
		$(if $(HAS_CUDA),,$(SWIFT_CPU_ARGS)) $(ARGS))
