# The front door. Every target picks its own environment under .venvs/ (created by `make setup`).
SHELL := /bin/bash
# A value given on the command line is read unexpanded before anything reads it: a $(shell ...) in it never runs
# (mk/shell.mk, read_given_values).
include mk/shell.mk
$(read_given_values)
VENVS := .venvs
BASE := $(VENVS)/base/bin
RL := $(VENVS)/rl/bin
LF := $(VENVS)/llamafactory/bin
# The environments' folders are fixed (scripts/make_env.sh creates them in .venvs/): a value given on the command
# line is refused here, before any recipe, so none reaches a shell (docs/reliability.md, "Make variables").
ifneq ($(VENVS)|$(BASE)|$(RL)|$(LF),.venvs|.venvs/base/bin|.venvs/rl/bin|.venvs/llamafactory/bin)
$(error VENVS, BASE, RL and LF are fixed (.venvs, .venvs/<env>/bin: scripts/make_env.sh creates the environments \
	there), got "$(VENVS)", "$(BASE)", "$(RL)", "$(LF)")
endif
#: 1: every target reads models and data from the local Hugging Face cache, never the network (make download-model and
#: make data-download turn it off for themselves); 0 lets the frameworks download by themselves.
export HF_HUB_OFFLINE ?= 1
#: transformers' own offline switch, set with HF_HUB_OFFLINE.
export TRANSFORMERS_OFFLINE ?= 1
#: datasets' own offline switch, set with HF_HUB_OFFLINE.
export HF_DATASETS_OFFLINE ?= 1
#: false: the tokenizers library starts no thread pool of its own (no fork warnings, no oversubscribed cores).
export TOKENIZERS_PARALLELISM ?= false
#: extra pytest arguments for make test, test-all, test-fast and test-inference, appended last (e.g. -k rewards, '-n 0').
PYTEST_ARGS ?=

#: the model every training target starts from: a Hugging Face Hub id found in the local cache (make download-model)
#: or a local model folder. It also picks the recipe files (RECIPE_MODEL).
MODEL ?= Qwen/Qwen2.5-VL-3B-Instruct
#: the dataset name the exports write and the SFT / GRPO targets read (make data names its outputs so).
DATASET ?= gui-r1-3k
#: where make infer writes predictions (one folder per model inside) and make eval reads them.
PRED_DIR ?= outputs/guir1/predictions

# Plain `make` prints the front door (the included files must not pick the default target).
.DEFAULT_GOAL := help

# Per-concern targets (data, sft, grpo, eval, inference) live in mk/*.mk.
include $(filter-out mk/shell.mk,$(wildcard mk/*.mk))
# A command-line variable no makefile here reads is one warning line naming the closest known one (mk/vars.mk).
$(_vars_check)

.PHONY: help setup test test-all test-fast lint demo demo-seeds lock clean-envs

help:
	@echo "gui-agent: make <target> [VAR=value ...]; every target picks its own env under $(VENVS)/ (README.md, docs/)"
	@echo "  setup              create $(VENVS)/{base,rl,llamafactory} from the pinned lock files"
	@echo "  setup-web          MiniWoB++: Debian chromium + chromium-driver, miniwob + selenium into .venvs/rl (root for apt)"
	@echo "  setup-gpu          GPU extras (vLLM, flash-attn, DeepSpeed) at pinned versions (GPU machine; setup-gpu-check: dry run)"
	@echo "  test / test-fast   the test suite, as CI runs it (test-fast skips the slow CPU training runs)"
	@echo "  test-all           make test and the repeat tests (second runs of slow checks: docs/testing.md)"
	@echo "  demo               the learning demo: a tiny model on CPU, SFT, GRPO from its end three ways (r1gui, gaussian, shuffled control) and from a partly trained start (sharpening: GRPO, control, more SFT), measured on the curriculum and the phone; 2,748 s on 2 idle cores (docs/demo.md)"
	@echo "  demo-seeds         the demo once per training seed (DEMO_SEEDS, default 0 1 2) and the table of its spread (docs/demo.md)"
	@echo "  demo-agent         the agent demo: tiny Qwen3-VL, SFT on scripted episodes, verl multi-turn agent GRPO + controls, held-out episodes (docs/demo-agent.md)"
	@echo "  demo-agent-seeds   the agent demo once per training seed (DEMO_AGENT_SEEDS, default 0 1 2) and its seed table"
	@echo "  download-model     model weights into the Hugging Face cache: make download-model MODEL=<Hub id> (network)"
	@echo "  data-download      GUI-R1-3K parquets from the Hugging Face Hub into $(GUIR1_DIR) (network)"
	@echo "  data               $(GUIR1_DIR)/{train,test}.parquet -> verl, LLaMA-Factory, ms-swift, VLM-R1 formats"
	@echo "  data-convert       any source: make data-convert DATA_FROM=screenagent DATA_INPUT=path [DATA_TARGETS=...]"
	@echo "  sft-llamafactory / sft-swift    SFT recipes (MODEL=..., DATASET=...)"
	@echo "  grpo-verl / grpo-trl / grpo-swift    GRPO recipes (MODEL=...)"
	@echo "  gui-agent-data / grpo-verl-agent    verl's multi-turn mobile_use agent recipe (Qwen3-VL; AGENT_DEVICE=gpu|npu|cpu)"
	@echo "  merge-verl         verl FSDP checkpoint -> Hugging Face folder: make merge-verl CKPT=<run, step or actor folder> OUT=<folder>"
	@echo "  infer              predictions for every benchmark in $(GUIR1_DIR) (MODEL_PATH=...)"
	@echo "  eval               scores, plots and failure galleries (PRED_DIR=...)"
	@echo "  bench              every benchmark that prints numbers (bench-parsers, bench-eval, ...)"
	@echo "  docs               the documentation site (docs/, mkdocs --strict) into outputs/site/"
	@echo "  vars               every make variable: default and meaning (docs/make-variables.md); make <target> VAR=value"

#: make demo: a folder of real phone data; its AitZ and GUIOdyssey screenshots join the SFT and GRPO data when it
#: exists.
SHARED_DATA ?= ../shared/data
#: make demo: the output folder (stages already built there are reused; the report is written there).
DEMO_OUT ?= outputs/demo

setup: $(VENVS)/base/.ready $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready

$(VENVS)/%/.ready: pyproject.toml requirements/%.in $(wildcard requirements/%.lock.txt) scripts/make_env.sh \
		scripts/llamafactory-cli
	bash scripts/make_env.sh $*

# Two pytest-xdist workers (the 2-core CI machine): a test file is one unit of work, the Ray files one unit together,
# the longest files first (tests/conftest.py, docs/testing.md). PYTEST_ARGS come last: PYTEST_ARGS='-n 0' runs
# everything in one process. make test (CI) leaves out the `repeat` tests: second runs of slow checks whose every code
# path make test already runs (the demo's repeat run, the negated verl sign launch); make test-all runs them too.
test: setup
	$(RL)/python -m pytest -n 2 -m "not repeat" $(call qwords,$(PYTEST_ARGS))

test-all: setup
	$(RL)/python -m pytest -n 2 $(call qwords,$(PYTEST_ARGS))

test-fast: setup
	$(RL)/python -m pytest -n 2 -m "not slow" $(call qwords,$(PYTEST_ARGS))

lint: $(VENVS)/rl/.ready
	$(RL)/ruff check core tests bench

# The learning demo (experiments/demo/, docs/demo.md): the tiny random Qwen2.5-VL is measured on held-out curriculum
# screens and realistic-phone screens and episodes, fine-tuned with LLaMA-Factory, then GRPO-trained with trl three
# ways (r1gui, Gaussian, shuffled control) and, from a partly trained SFT checkpoint, sharpened (GRPO, its control,
# more SFT), and measured after each; CPU: 2,748 s wall (4,005 s CPU) on 2 idle cores as docs/demo.md measures it. Stages already built are reused; the last line printed is the report folder.
#: extra experiments/demo/run.py options, e.g. --fresh (redo every stage) or --only 'grpo_*'.
DEMO_ARGS ?=
demo: $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready
	@$(RL)/python experiments/demo/run.py --out $(call q,$(DEMO_OUT)) --shared-data $(call q,$(SHARED_DATA)) $(call qwords,$(DEMO_ARGS))

# The demo's spread over training seeds (experiments/demo/seeds.py): one `make demo` per seed into
# $(DEMO_SEEDS_OUT)/seed<k> (seed 0 read from $(DEMO_OUT) when it is finished), then the table of what each measured.
#: make demo-seeds: the training seeds (the model's random weights, SFT's and GRPO's seeds).
DEMO_SEEDS ?= 0 1 2
#: make demo-seeds: the output folder (one demo folder per seed, seeds.json, seeds.md).
DEMO_SEEDS_OUT ?= outputs/demo-seeds
demo-seeds: $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready
	@$(RL)/python experiments/demo/seeds.py --seeds $(call qwords,$(DEMO_SEEDS)) --out $(call q,$(DEMO_SEEDS_OUT)) \
		--shared-data $(call q,$(SHARED_DATA)) $(if $(wildcard $(DEMO_OUT)/report.json),--reuse-seed0 $(call q,$(DEMO_OUT)))

# Refresh the lock files from the environments as they are now (after changing requirements/*.in).
lock: setup
	$(RL)/pip freeze --exclude-editable > requirements/rl.lock.txt
	$(LF)/pip freeze --exclude-editable > requirements/llamafactory.lock.txt
	$(BASE)/pip freeze --exclude-editable > requirements/base.lock.txt

clean-envs:
	rm -rf $(VENVS)
