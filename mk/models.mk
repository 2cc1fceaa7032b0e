# Model weights (core/models.py).
#   make download-model MODEL=Qwen/Qwen2.5-VL-3B-Instruct   huggingface_hub's snapshot_download into the Hugging Face
#                          cache ($HF_HUB_CACHE, default ~/.cache/huggingface/hub; HF_HOME moves it); needs network
# Every target then takes the same MODEL=<Hub id> and finds it in that cache offline (HF_HUB_OFFLINE=1, exported by
# the Makefile). A local model folder (MODEL=/path/to/model, MODEL_PATH= for infer) works everywhere, with nothing
# to download. Before a target starts a framework, `gui-agent model check` (model_preflight) stops in one line,
# exit 2, when the model is neither (make download-model MODEL=... named).
.PHONY: download-model

# Offline mode is turned off for the download alone (as for make data-download).
download-model: $(VENVS)/rl/.ready
	@HF_HUB_OFFLINE=0 TRANSFORMERS_OFFLINE=0 $(RL)/python -m core model download $(call q,$(MODEL))

# $(1) target, $(2) the model (local folder or Hub id), $(3) the variable it came from.
model_preflight = @$(RL)/python -m core model check --target $(1) --variable $(3) $(call q,$(2))
