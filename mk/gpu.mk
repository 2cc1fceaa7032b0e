# GPU extras, on a GPU machine after `make setup` (pins and the reasons for them: requirements/gpu-*.txt).
#   make setup-gpu         .venvs/rl: vLLM 0.31.0 with the torch it pins (2.13.0 replaces the CPU env's 2.14.1) and
#                          DeepSpeed, constrained by requirements/gpu-rl.lock.txt, then flash-attn built against that
#                          torch; .venvs/llamafactory: DeepSpeed (its full-SFT YAMLs use ZeRO-3); `pip check` in both
#   make setup-gpu-check   the same installs through pip's resolver as a dry run (no install; any machine with PyPI
#                          access); pip's reports land in $(GPU_WORK)/ and the key versions are printed
#: make setup-gpu / setup-gpu-check: the folder for the GPU requirements file and pip's dry-run reports.
GPU_WORK ?= outputs/setup-gpu
# GPU_WORK is a path: every recipe line quotes it ($(call q,...), mk/shell.mk).
# rl.in without its CPU torch pins (requirements/gpu-rl.txt pins vLLM's)
_GPU_RL_IN = $(GPU_WORK)/rl.in
_GPU_RL = -c requirements/gpu-rl.lock.txt -r $(call q,$(_GPU_RL_IN)) -r requirements/gpu-rl.txt
_GPU_LF = -c requirements/llamafactory.lock.txt -r requirements/llamafactory.in -r requirements/gpu-llamafactory.txt

.PHONY: setup-gpu setup-gpu-check _gpu-inputs

_gpu-inputs:
	@mkdir -p $(call q,$(GPU_WORK))
	@grep -v -E '^(torch|torchvision)==' requirements/rl.in > $(call q,$(_GPU_RL_IN))

# The GPU check comes first, before `make setup` (which this runs) can start building anything.
setup-gpu:
	@nvidia-smi -L >/dev/null 2>&1 || { echo "setup-gpu installs CUDA builds (vLLM, torch 2.13.0, flash-attn," \
	  "DeepSpeed) and needs an NVIDIA GPU, and nvidia-smi finds none here; make setup-gpu-check checks that the pins resolve"; exit 2; }
	@$(MAKE) --no-print-directory setup _gpu-inputs _vars_checked=1
	$(RL)/pip install $(_GPU_RL)
	$(RL)/pip install --no-build-isolation -r requirements/gpu-rl-build.txt
	$(LF)/pip install $(_GPU_LF)
	$(RL)/pip check
	$(LF)/pip check

setup-gpu-check: $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready _gpu-inputs
	$(RL)/pip install --dry-run --ignore-installed --quiet --report $(call q,$(GPU_WORK)/rl.report.json) $(_GPU_RL)
	$(LF)/pip install --dry-run --ignore-installed --quiet --report $(call q,$(GPU_WORK)/llamafactory.report.json) $(_GPU_LF)
	@$(RL)/python -c "import json, sys; \
	  [print(f, ' '.join(sorted(i['metadata']['name'] + '==' + i['metadata']['version'] for i in json.load(open(f))['install'] \
	   if i['metadata']['name'] in ('vllm', 'torch', 'torchvision', 'transformers', 'deepspeed', 'verl', 'ms_swift', 'trl', 'llamafactory')))) \
	   for f in sys.argv[1:]]" $(call q,$(GPU_WORK)/rl.report.json) $(call q,$(GPU_WORK)/llamafactory.report.json)
	@echo "resolved (dry run); flash-attn ($$(grep -v '^#' requirements/gpu-rl-build.txt)) is built on the GPU machine, after torch"
