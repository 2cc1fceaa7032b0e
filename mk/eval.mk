# Evaluation: `make eval PRED_DIR=outputs/<model>` scores every benchmark file in the folder (both modes);
# EVAL_BENCHMARK=<name> scores files of any other name (e.g. `gui-agent infer --output pred.jsonl`) as that benchmark.
#: where make eval writes scores, plots and failure galleries.
EVAL_OUT ?= $(PRED_DIR)/eval
#: the metric modes make eval scores in, space-separated: strict (this project's) and guir1 (GUI-R1's own).
EVAL_MODES ?= strict guir1
#: score every prediction file in PRED_DIR as this benchmark (files of any other name); empty: the benchmark comes
#: from each file's name.
EVAL_BENCHMARK ?=

.PHONY: eval

eval: $(VENVS)/rl/.ready
	MODES=$(call q,$(EVAL_MODES)) bash experiments/guir1/eval.sh $(call q,$(PRED_DIR)) $(call q,$(EVAL_OUT)) \
	  $(if $(EVAL_BENCHMARK),--benchmark $(call q,$(EVAL_BENCHMARK)))
