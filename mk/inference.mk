# Inference: predictions for every benchmark file (experiments/guir1/inference.sh), then `make eval`.
#
#   make infer MODEL_PATH=ckpt/actor/huggingface                                    # vLLM, all GPUs
#   make infer MODEL_PATH=... INFER_BACKEND=hf                                       # CPU / 1 GPU
#   make infer MODEL_PATH=... INFER_PRESET= INFER_PROMPT=train                       # the training prompt and resize
#   make infer-one MODEL_PATH=... INFER_INPUT=Data/GUI-R1-3K/screenspot_test.parquet INFER_OUTPUT=outputs/pred/screenspot_test.json
#   make test-inference                                                               # the inference tests (CPU)
#
# All benchmark files run in one process, so the model loads once.
# Variables: each is documented by the #: lines above it (make vars; docs/make-variables.md).
#:env DP make infer with vLLM: data parallel engines (number of GPUs / TP); read by experiments/guir1/inference.sh.
#:env BATCH_SIZE make infer: rows per generate call (64 vllm, 4 hf, 16 openai); read by experiments/guir1/inference.sh.
#:env BENCHMARKS make infer: space-separated benchmark names (GUI-R1's eight); read by experiments/guir1/inference.sh.
#:env MIN_PIXELS make infer: the smart_resize floor (the preset's; 3136 without one); read by experiments/guir1/inference.sh (ms-swift's targets read it too).
#: make infer / infer-one: the model to predict with (a folder, a Hub id, or a server URL with INFER_BACKEND=openai);
#: required.
MODEL_PATH ?=
#: make infer: the folder of <benchmark>_test.parquet files.
INFER_DATA ?= $(GUIR1_DIR)
#: vllm (GPU), hf (transformers: CPU or one GPU) or openai (a served model at MODEL_PATH).
INFER_BACKEND ?= vllm
#: the model preset (docs/presets.md): the authors' prompts, generation settings and pixel bounds; guir1 is GUI-R1's;
#: empty: none.
INFER_PRESET ?= guir1
#: make infer: train (the training template), guir1 (GUI-R1's per-benchmark test prompts) or any core.prompts
#: template; empty: the preset's (train without a preset).
INFER_PROMPT ?=
#: the smart_resize pixel cap; empty: the preset's (1258291 without one).
INFER_MAX_PIXELS ?=
#: extra gui-agent infer options, e.g. --max-new-tokens 512.
INFER_ARGS ?=
#: make infer-one: the one input file (a benchmark parquet or unified file).
INFER_INPUT ?=
#: make infer-one: the predictions file it writes.
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
