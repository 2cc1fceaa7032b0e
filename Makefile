# The front door. Every target picks its own environment under .venvs/ (created by `make setup`).
SHELL := /bin/bash
VENVS := .venvs
BASE := $(VENVS)/base/bin
RL := $(VENVS)/rl/bin
LF := $(VENVS)/llamafactory/bin
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
PYTEST_ARGS ?=

MODEL ?= Qwen/Qwen2.5-VL-3B-Instruct
DATASET ?= gui-r1-3k
PRED_DIR ?= outputs/guir1/predictions

# Plain `make` prints the front door (the included files must not pick the default target).
.DEFAULT_GOAL := help

# Per-concern targets (data, sft, grpo, eval, inference) live in mk/*.mk.
include $(wildcard mk/*.mk)

.PHONY: help setup test test-fast lint demo lock clean-envs

help:
	@echo "gui-agent: make <target> [VAR=value ...]; every target picks its own env under $(VENVS)/ (README.md)"
	@echo "  setup              create $(VENVS)/{base,rl,llamafactory} from the pinned lock files"
	@echo "  setup-web          MiniWoB++: Debian chromium + chromium-driver, miniwob + selenium into .venvs/rl (root for apt)"
	@echo "  setup-gpu          GPU extras (vLLM, flash-attn, DeepSpeed) at pinned versions (GPU machine; setup-gpu-check: dry run)"
	@echo "  test / test-fast   the test suite (test-fast skips the slow CPU training runs)"
	@echo "  demo               every stage on CPU in about a minute, nothing downloaded"
	@echo "  data-download      GUI-R1-3K parquets from the Hugging Face Hub into $(GUIR1_DIR) (network)"
	@echo "  data               $(GUIR1_DIR)/{train,test}.parquet -> verl, LLaMA-Factory, ms-swift, VLM-R1 formats"
	@echo "  data-convert       any source: make data-convert DATA_FROM=screenagent DATA_INPUT=path [DATA_TARGETS=...]"
	@echo "  sft-llamafactory / sft-swift    SFT recipes (MODEL=..., DATASET=...)"
	@echo "  grpo-verl / grpo-trl / grpo-swift    GRPO recipes (MODEL=...)"
	@echo "  gui-agent-data / grpo-verl-agent    verl's multi-turn mobile_use agent recipe (Qwen3-VL; AGENT_DEVICE=gpu|npu)"
	@echo "  infer              predictions for every benchmark in $(GUIR1_DIR) (MODEL_PATH=...)"
	@echo "  eval               scores, plots and failure galleries (PRED_DIR=...)"
	@echo "  bench              every benchmark that prints numbers (bench-parsers, bench-eval, ...)"

SHARED_DATA ?= ../shared/data
DEMO_OUT ?= outputs/demo

setup: $(VENVS)/base/.ready $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready

$(VENVS)/%/.ready: pyproject.toml requirements/%.in $(wildcard requirements/%.lock.txt) scripts/make_env.sh
	bash scripts/make_env.sh $*

test: setup
	$(RL)/python -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(RL)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: $(VENVS)/rl/.ready
	$(RL)/ruff check core tests bench

# The whole pipeline on CPU in about a minute: the tiny random Qwen2.5-VL, real screenshots from $(SHARED_DATA)
# (an AitZ episode and ScreenSpot web rows) -> unified parquet -> HF inference -> both metric modes, plots and a
# failure gallery. The model is random, so every prediction is wrong: the point is that every stage runs.
demo: $(VENVS)/rl/.ready
	$(RL)/gui-agent tiny-model --output $(DEMO_OUT)/models/tiny-qwen2.5-vl --overwrite
	$(RL)/gui-agent data convert --from aitw --to unified --input $(SHARED_DATA)/aitz --output $(DEMO_OUT)/data --overwrite
	$(RL)/gui-agent data convert --from screenspot --to unified --skip-missing --overwrite \
		--input $(SHARED_DATA)/screenspot/screenspot_v1_annotations.jsonl --images $(SHARED_DATA)/screenspot/images \
		--output $(DEMO_OUT)/data
	$(RL)/gui-agent infer --backend hf --model $(DEMO_OUT)/models/tiny-qwen2.5-vl --max-new-tokens 48 \
		--input $(DEMO_OUT)/data/aitz.parquet --output $(DEMO_OUT)/predictions/tiny-qwen2.5-vl/androidcontrol_high_test.json
	$(RL)/gui-agent infer --backend hf --model $(DEMO_OUT)/models/tiny-qwen2.5-vl --max-new-tokens 48 \
		--input $(DEMO_OUT)/data/screenspot_v1_annotations.parquet \
		--output $(DEMO_OUT)/predictions/tiny-qwen2.5-vl/screenspot_test.json
	bash experiments/guir1/eval.sh $(DEMO_OUT)/predictions/tiny-qwen2.5-vl $(DEMO_OUT)/eval
	@echo "demo done: open $(DEMO_OUT)/eval/report.md, $(DEMO_OUT)/eval/strict/plots/ and $(DEMO_OUT)/eval/strict/gallery/"

# Refresh the lock files from the environments as they are now (after changing requirements/*.in).
lock: setup
	$(RL)/pip freeze --exclude-editable > requirements/rl.lock.txt
	$(LF)/pip freeze --exclude-editable > requirements/llamafactory.lock.txt
	$(BASE)/pip freeze --exclude-editable > requirements/base.lock.txt

clean-envs:
	rm -rf $(VENVS)
