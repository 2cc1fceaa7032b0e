# Evaluation: `make eval PRED_DIR=outputs/<model>` scores every benchmark file in the folder (both modes);
# EVAL_BENCHMARK=<name> scores files of any other name (e.g. `gui-agent infer --output pred.jsonl`) as that benchmark.
EVAL_OUT ?= $(PRED_DIR)/eval
EVAL_MODES ?= strict guir1
EVAL_BENCHMARK ?=

.PHONY: eval

eval: $(VENVS)/rl/.ready
	MODES=$(call q,$(EVAL_MODES)) bash experiments/guir1/eval.sh $(call q,$(PRED_DIR)) $(call q,$(EVAL_OUT)) \
	  $(if $(EVAL_BENCHMARK),--benchmark $(call q,$(EVAL_BENCHMARK)))
