# Benchmarks that print numbers, each in the rl environment (the system python lacks the project's packages).
#   make bench                 all of them (several minutes on a 2-core CPU)
#   make bench-eval BENCH_ARGS="--rows 20000"    one of them, with its own options
#: the options of the one bench script a bench-* target runs (e.g. --rows 20000); make bench passes them to each.
BENCH_ARGS ?=

.PHONY: bench bench-convert bench-rewards bench-eval bench-world

bench: bench-parsers bench-rewards bench-eval bench-convert bench-world

bench-convert: $(VENVS)/rl/.ready
	$(RL)/python bench/convert.py $(call qwords,$(BENCH_ARGS))

bench-rewards: $(VENVS)/rl/.ready
	$(RL)/python bench/rewards.py $(call qwords,$(BENCH_ARGS))

bench-eval: $(VENVS)/rl/.ready
	$(RL)/python bench/eval.py $(call qwords,$(BENCH_ARGS))

bench-world: $(VENVS)/rl/.ready
	$(RL)/python bench/world.py $(call qwords,$(BENCH_ARGS))

# verl on this machine: seconds per step and where a step goes, both verl recipes (about 10 minutes on 2 cores).
.PHONY: bench-verl
bench-verl: $(VENVS)/rl/.ready
	$(RL)/python bench/verl_step.py $(call qwords,$(BENCH_ARGS))
