# Inference: predictions for every benchmark file (experiments/guir1/inference.sh), then `make eval`.
#
#   make infer MODEL_PATH=ckpt/actor/huggingface                                    # vLLM, all GPUs
#   make infer MODEL_PATH=... INFER_BACKEND=hf                                       # CPU / 1 GPU
#   make infer MODEL_PATH=... INFER_PRESET= INFER_PROMPT=train                       # the training prompt and resize
#   make infer-one MODEL_PATH=... INFER_INPUT=Data/GUI-R1-3K/screenspot_test.parquet INFER_OUTPUT=outputs/pred/screenspot_test.json
#   make test-inference                                                               # the inference tests (CPU)
#
# All benchmark files run in one process, so the model loads once.
# Variables: MODEL_PATH (required), INFER_DATA (GUIR1_DIR = Data/GUI-R1-3K, what make data-download writes),
# PRED_DIR root (outputs/guir1/predictions), INFER_BACKEND vllm|hf|openai (vllm), INFER_PRESET model preset (guir1:
# GUI-R1's prompts, generation settings and pixel bounds; docs/presets.md; empty = none), INFER_PROMPT
# train|guir1|<template> (the preset's), INFER_MAX_PIXELS (the preset's), INFER_ARGS extra `gui-agent infer` options.
MODEL_PATH ?=
INFER_DATA ?= $(GUIR1_DIR)
INFER_BACKEND ?= vllm
INFER_PRESET ?= guir1
INFER_PROMPT ?=
INFER_MAX_PIXELS ?=
INFER_ARGS ?=
INFER_INPUT ?=
INFER_OUTPUT ?=

.PHONY: infer infer-one test-inference

infer: $(VENVS)/rl/.ready
	@test -n $(call q,$(MODEL_PATH)) || { echo "set MODEL_PATH=<model folder or server URL>"; exit 2; }
	MODEL_PATH=$(call q,$(MODEL_PATH)) DATA_DIR=$(call q,$(INFER_DATA)) OUT_DIR=$(call q,$(PRED_DIR)) \
	  BACKEND=$(call q,$(INFER_BACKEND)) PRESET=$(call q,$(INFER_PRESET)) PROMPT=$(call q,$(INFER_PROMPT)) \
	  MAX_PIXELS=$(call q,$(INFER_MAX_PIXELS)) INFER_ARGS=$(call q,$(INFER_ARGS)) \
	  bash experiments/guir1/inference.sh

infer-one: $(VENVS)/rl/.ready
	@test -n $(call q,$(MODEL_PATH)) -a -n $(call q,$(INFER_INPUT)) -a -n $(call q,$(INFER_OUTPUT)) || \
	  { echo "set MODEL_PATH, INFER_INPUT and INFER_OUTPUT"; exit 2; }
	$(if $(filter vllm,$(INFER_BACKEND)),$(call gpu_only,infer-one,vLLM; on CPU: INFER_BACKEND=hf))
	$(if $(filter hf vllm,$(INFER_BACKEND)),$(call model_preflight,infer-one,$(MODEL_PATH),MODEL_PATH))
	$(RL)/python -m core infer --backend $(call q,$(INFER_BACKEND)) --model $(call q,$(MODEL_PATH)) \
	  --input $(call q,$(INFER_INPUT)) --output $(call q,$(INFER_OUTPUT)) $(if $(INFER_PRESET),--preset $(call q,$(INFER_PRESET))) \
	  $(if $(INFER_MAX_PIXELS),--max-pixels $(call q,$(INFER_MAX_PIXELS))) $(call qwords,$(INFER_ARGS))

test-inference: $(VENVS)/rl/.ready
	$(RL)/python -m pytest tests/test_inference_requests.py tests/test_inference_vllm.py \
	  tests/test_inference_e2e.py tests/test_inference_openai.py $(call qwords,$(PYTEST_ARGS))
