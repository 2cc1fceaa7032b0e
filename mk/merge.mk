# verl's FSDP checkpoint -> a Hugging Face folder (what gui-agent infer, make infer and the trainers load):
#   make merge-verl CKPT=checkpoints/gui-agent/qwen2_5_vl_3b_guir1_verl OUT=outputs/gui-r1-3b     # the newest step
#   make merge-verl CKPT=checkpoints/gui-agent/<run>/global_step_90/actor OUT=outputs/step90       # one step
# Pre-flight (scripts/merge_verl.py, one line and exit 2 before verl is imported): the checkpoint has
# fsdp_config.json, every model_world_size_W_rank_R.pt shard its world size needs and huggingface/config.json;
# OUT is new, empty, or this target's own earlier merge (OUT/.merge-verl.json). The same merge again says OUT is up
# to date and exits 0; a newer save of the same checkpoint is merged again. Then verl's own merger:
# $(RL)/python -m verl.model_merger merge --backend fsdp --local_dir <actor> --target_dir OUT.
#: make merge-verl: the verl checkpoint: an actor folder (global_step_N/actor), a global_step_N folder, or the run folder (its newest step).
CKPT ?=
#: make merge-verl: the Hugging Face folder to write (new, empty, or an earlier merge-verl of the same checkpoint).
OUT ?=

.PHONY: merge-verl
merge-verl: $(VENVS)/rl/.ready
	@actor=$$($(RL)/python scripts/merge_verl.py check $(call q,$(CKPT)) $(call q,$(OUT))) || \
	  { rc=$$?; [ $$rc = 10 ] && exit 0; exit $$rc; }; \
	set -e; echo "merge-verl: $$actor -> "$(call q,$(OUT)); \
	$(RL)/python -m verl.model_merger merge --backend fsdp --local_dir "$$actor" --target_dir $(call q,$(OUT)); \
	$(RL)/python scripts/merge_verl.py mark "$$actor" $(call q,$(OUT))
