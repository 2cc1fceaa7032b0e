# The agent demo (experiments/demo_agent/, docs/demo-agent.md): the tiny random Qwen3-VL, SFT on scripted episodes
# in the agent recipe's own format (LLaMA-Factory), then verl's multi-turn agent GRPO through make grpo-verl-agent
# with its controls (shuffled rewards, plain GRPO, more SFT for the same time), measured on held-out agent_test
# episodes. Stages already built are reused; the last line printed is the report folder.
#: make demo-agent: the output folder (stages already built there are reused; the report is written there).
DEMO_AGENT_OUT ?= outputs/demo-agent
#: extra experiments/demo_agent/run.py options, e.g. --fresh (redo every stage), --profile ci or --seed 1.
DEMO_AGENT_ARGS ?=
#: make demo-agent-seeds: the training seeds (the model's random weights, SFT's and RL's seeds).
DEMO_AGENT_SEEDS ?= 0 1 2
#: make demo-agent-seeds: the output folder (one demo-agent folder per seed, seeds.json, seeds.md).
DEMO_AGENT_SEEDS_OUT ?= outputs/demo-agent-seeds

.PHONY: demo-agent demo-agent-seeds
demo-agent: $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready
	@$(RL)/python experiments/demo_agent/run.py --out $(call q,$(DEMO_AGENT_OUT)) $(call qwords,$(DEMO_AGENT_ARGS))

demo-agent-seeds: $(VENVS)/rl/.ready $(VENVS)/llamafactory/.ready
	@$(RL)/python experiments/demo_agent/seeds.py --seeds $(call qwords,$(DEMO_AGENT_SEEDS)) \
		--out $(call q,$(DEMO_AGENT_SEEDS_OUT)) $(call qwords,$(DEMO_AGENT_ARGS))
