# Data targets.
#
#   make data-download         GUI-R1-3K (Hugging Face dataset ritzzai/GUI-R1: train.parquet, test.parquet and the
#                              eight <benchmark>_test.parquet files) into $(GUIR1_DIR) with Data/hfd.sh; needs network
#   make data                  $(GUIR1_DIR)/{train,test}.parquet -> $(DATA_TARGETS), at GUI-R1's training resize,
#                              named $(DATASET) (what the SFT/GRPO recipes read):
#                                verl          Data/verl/$(DATASET)/{train,test}.parquet      (make grpo-verl)
#                                llamafactory  LLaMA-Factory/data/$(DATASET)/ + dataset_info.json entries
#                                              $(DATASET) and $(DATASET)-test                 (make sft-llamafactory)
#                                swift         Data/swift/$(DATASET){,-test}.jsonl            (make sft-swift)
#                                vlmr1         Data/vlmr1/$(DATASET){,-test}.jsonl + .hf/     (make grpo-trl)
#                                unified, mobile_use   Data/<target>/$(DATASET){,-test}.*
#   make data-convert DATA_FROM=screenagent DATA_INPUT=../shared/data/screenagent [DATA_TARGETS="unified"]
#                              any source: every file or folder of DATA_INPUT -> DATA_OUT/<target>/
#   make data DATA_FROM=screenspot DATA_INPUT=...   the same as data-convert (any DATA_FROM but guir1)
#   make data-inspect DATA_FROM=... DATA_INPUT=...  counts per action / task type and the box convention
#
# Variables: each is documented by the #: lines above it (make vars; docs/make-variables.md).
#: GUI-R1's parquets: the one default data root (make data-download writes it, make data and make infer read it).
GUIR1_DIR ?= Data/GUI-R1-3K
#: where the verl, swift, vlmr1 and unified exports of make data go (one folder per format).
DATA_ROOT ?= Data
#: LLaMA-Factory's dataset_dir (dataset_info.json) for make data's llamafactory export.
LF_DATA_DIR ?= LLaMA-Factory/data
#: make data: the training recipe whose pixel bounds the export uses (GUI-R1: 262144..1258291); the trainers read the
#: same file, so the processor never resizes again and gold coordinates match the pixels the model sees.
DATA_RECIPE ?= recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml
#: make data: the convert options that set those bounds.
DATA_PIXELS ?= --recipe $(DATA_RECIPE)
#: image threads of the conversion.
DATA_WORKERS ?= 2
#: the source format: guir1 (make data), screenspot, aitw, mind2web, guiodyssey, screenagent or unified (make
#: data-convert).
DATA_FROM ?= guir1
#: make data-convert / data-inspect: space-separated input files or folders (folder sources: the folder itself).
DATA_INPUT ?=
#: make data-convert: the output root, one folder per target.
DATA_OUT ?= Data/converted
#: the --images folder for sources whose records name image files; empty: none.
DATA_IMAGES ?=
#: extra gui-agent data convert options, e.g. --skip-missing --workers 4.
DATA_ARGS ?=
#: extra Data/hfd.sh options, e.g. --dry-run (print the download command only).
HFD_ARGS ?=
ifeq ($(DATA_FROM),guir1)
#: space-separated export formats among verl, llamafactory, swift, vlmr1, unified and mobile_use; the default is verl
#: llamafactory swift vlmr1 with DATA_FROM=guir1, else unified.
DATA_TARGETS ?= verl llamafactory swift vlmr1
else
DATA_TARGETS ?= unified
endif

_DATA_IMAGES_OPT = $(if $(DATA_IMAGES),--images $(call q,$(DATA_IMAGES)),)
_NEED_INPUT = @test -n $(call q,$(DATA_INPUT)) || { echo "set DATA_INPUT=<file or folder> (and DATA_FROM=<source>; see Data/README.md)"; exit 2; }

.PHONY: data data-guir1 data-convert data-inspect data-download

ifeq ($(DATA_FROM),guir1)
data: data-guir1
else
data: data-convert
endif

# DATA_RECIPE is a path: one quoted word (a DATA_PIXELS given by the user is a word list).
_DATA_PIXELS_OPT = $(if $(filter file,$(origin DATA_PIXELS)),--recipe $(call q,$(DATA_RECIPE)),$(call qwords,$(DATA_PIXELS)))
_CONVERT_ARGS = --from guir1 $(_DATA_PIXELS_OPT) --workers $(call q,$(DATA_WORKERS)) $(call qwords,$(DATA_ARGS))

# Output folder and name of each target (verl keeps GUI-R1's train/test file names inside one folder).
data-guir1: $(VENVS)/rl/.ready
	$(call need_name,DATASET,data)
	@test -f $(call q,$(GUIR1_DIR)/train.parquet) || { echo "no "$(call q,$(GUIR1_DIR)/train.parquet)": run make data-download (or set GUIR1_DIR)"; exit 1; }
	@set -e; for split in train test; do \
	  f=$(call q,$(GUIR1_DIR))/$$split.parquet; [ -f "$$f" ] || continue; \
	  n=$(DATASET)$$( [ $$split = test ] && echo -test || true); \
	  for t in $(call qwords,$(DATA_TARGETS)); do \
	    case $$t in \
	      verl) out=$(call q,$(DATA_ROOT))/verl/$(DATASET); name=$$split ;; \
	      llamafactory) out=$(call q,$(LF_DATA_DIR))/$(DATASET); name=$$n ;; \
	      *) out=$(call q,$(DATA_ROOT))/"$$t"; name=$$n ;; \
	    esac; \
	    stamp="$$out/.make-data.$$name.json"; cmd=($(_CONVERT_ARGS) --to "$$t" --input "$$f" --output "$$out" --name "$$name"); \
	    inputs=("$$f" $(if $(filter file,$(origin DATA_PIXELS)),$(call q,$(DATA_RECIPE)))); \
	    $(_CONVERT_ONCE); \
	  done; \
	done

# Idempotent (scripts/stamp.py), make data and make data-convert alike: each conversion leaves a stamp beside its
# output, <output folder>/.make-data.<name>.json, naming its command. The same command again, with no file of its
# inputs (the input, DATA_IMAGES, DATA_RECIPE) newer, says the output is up to date and converts nothing (exit 0); a
# changed input or option converts again over this target's own output (--overwrite). An output with no stamp
# (written some other way) is left to data convert, which refuses to replace it. Set by each loop: f (input), t
# (target), out (output folder), stamp, cmd (the convert options, an array), inputs (what the output is made from).
_STAMP = $(RL)/python -I scripts/stamp.py
_CONVERT_ONCE = rc=0; $(_STAMP) fresh "$$stamp" "$${cmd[*]}" "$${inputs[@]}" || rc=$$?; \
	if [ $$rc = 0 ]; then echo "== $$f -> $$t: up to date ($$stamp: same command, no input file newer)"; else \
	  echo "== $$f -> $$t$$( [ $$rc = 1 ] && echo ': input or options changed since the last conversion, converting again')"; \
	  $(RL)/python -m core data convert "$${cmd[@]}" $$( [ $$rc = 1 ] && echo --overwrite ); \
	  mkdir -p "$$out"; $(_STAMP) write "$$stamp" "$${cmd[*]}"; fi

data-convert: $(VENVS)/rl/.ready
	$(_NEED_INPUT)
	@set -e; for f in $(call qwords,$(DATA_INPUT)); do for t in $(call qwords,$(DATA_TARGETS)); do \
	  out=$(call q,$(DATA_OUT))/"$$t"; stamp="$$out/.make-data.$$(basename -- "$$f").json"; \
	  cmd=(--from $(call q,$(DATA_FROM)) --to "$$t" --input "$$f" --output "$$out" $(_DATA_IMAGES_OPT) \
	    $(call qwords,$(DATA_ARGS))); \
	  inputs=("$$f" $(if $(DATA_IMAGES),$(call q,$(DATA_IMAGES)))); \
	  $(_CONVERT_ONCE); \
	done; done

data-inspect: $(VENVS)/rl/.ready
	$(_NEED_INPUT)
	@set -e; for f in $(call qwords,$(DATA_INPUT)); do echo "== $$f"; \
	  $(RL)/python -m core data inspect --from $(call q,$(DATA_FROM)) --input "$$f" $(_DATA_IMAGES_OPT); done

# Offline mode (exported by the Makefile for every other target) is turned off for the download alone;
# hfd.sh finds `hf` in the project's environments.
data-download:
	HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 TRANSFORMERS_OFFLINE=0 bash Data/hfd.sh --local-dir $(call q,$(GUIR1_DIR)) \
	  $(call qwords,$(HFD_ARGS))
