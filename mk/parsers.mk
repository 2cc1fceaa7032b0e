# Parsers: `make bench-parsers` prints parses/s per answer format and the worst time on 1 MB adversarial inputs.
.PHONY: bench-parsers

bench-parsers: $(VENVS)/rl/.ready
	$(RL)/python bench/parsers.py $(call qwords,$(BENCH_ARGS))
