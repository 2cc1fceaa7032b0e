# Evaluation: `make eval PRED_DIR=outputs/<model>` scores every benchmark file in the folder (both modes).
EVAL_OUT ?= $(PRED_DIR)/eval
EVAL_MODES ?= strict guir1

.PHONY: eval

eval: $(VENVS)/rl/.ready
	MODES="$(EVAL_MODES)" bash experiments/guir1/eval.sh "$(PRED_DIR)" "$(EVAL_OUT)"
