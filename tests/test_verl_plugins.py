"""verl's CPU platform and transformers rollout backend (verl/plugins), without Ray: the parts a training run relies
on, checked directly. The trainer runs themselves are tests/test_verl_cpu_training.py.

- the ``hf`` server's log-probs of the tokens it sampled equal the log-probs a forward pass of the same weights
  gives them (verl's actor recomputes exactly these), for images and text, at temperature 1 and 0.7; with top-k they
  are the renormalised (processed) ones; greedy decoding is the argmax chain;
- a weight sync changes what it samples, and a weight it does not have is an error naming it;
- the platform's names and calls, the backend-string fix and the registries verl looks them up in."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env

torch = pytest.importorskip("torch")
pytest.importorskip("verl")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "verl" / "plugins"))
os.environ.setdefault("VERL_PLATFORM", "cpu")

import verl_cpu_platform  # noqa: E402
import verl_hf_rollout  # noqa: E402
import verl_position_ids_fix  # noqa: E402,F401  (installs its wrapper)


@pytest.fixture(scope="module")
def server():
    from omegaconf import OmegaConf

    from core.testing import tiny_qwen25vl_path
    from verl.utils.config import omega_conf_to_dataclass

    config = omega_conf_to_dataclass(OmegaConf.create({
        "_target_": "verl.workers.config.RolloutConfig", "name": "hf", "prompt_length": 1024,
        "response_length": 12, "dtype": "float32"}))
    model_config = OmegaConf.create({"_target_": "verl.workers.config.HFModelConfig", "path": str(tiny_qwen25vl_path())})
    return verl_hf_rollout.HFRolloutServer(config=config, model_config=model_config, replica_rank=0, device="cpu")


@pytest.fixture(scope="module")
def image_prompt(server):
    """Prompt ids with a screenshot's image tokens expanded (as verl's agent loop sends them) and the image."""
    from PIL import Image

    image = Image.open(sorted((ROOT.parent / "shared" / "data" / "aitz").rglob("*.png"))[0]).convert("RGB")
    image = image.resize((224, 448))
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open the clock app."}]}]
    text = server.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    ids = server.processor(text=[text], images=[image], return_tensors="pt")["input_ids"][0].tolist()
    return ids, image


def forward_logprobs(server, prompt_ids, tokens, image, temperature):
    """What verl's actor computes: log-softmax of logits / temperature at each sampled token."""
    ids = torch.tensor([prompt_ids + tokens])
    vision = server._vision_inputs(prompt_ids, [image] if image is not None else None)
    with torch.no_grad():
        logits = server.model(input_ids=ids, attention_mask=torch.ones_like(ids), **vision).logits[0]
    logp = torch.log_softmax(logits[len(prompt_ids) - 1:-1].float() / temperature, dim=-1)
    return logp.gather(-1, torch.tensor(tokens).view(-1, 1)).view(-1)


def generate(server, prompt_ids, image, **params):
    out = asyncio.run(server.generate(prompt_ids=prompt_ids, sampling_params={"logprobs": True, **params},
                                      request_id="r", image_data=[image] if image is not None else None))
    return out.token_ids, out.log_probs


@pytest.mark.parametrize("temperature", [1.0, 0.7])
@pytest.mark.parametrize("with_image", [True, False], ids=["image", "text"])
def test_rollout_logprobs_equal_the_actors_recomputed_ones(server, image_prompt, temperature, with_image):
    prompt_ids, image = image_prompt
    if not with_image:
        prompt_ids = server.tokenizer.apply_chat_template([{"role": "user", "content": "Open the clock app."}],
                                                          add_generation_prompt=True, tokenize=True)
        prompt_ids = list(prompt_ids if isinstance(prompt_ids, list) else prompt_ids["input_ids"])
        image = None
    torch.manual_seed(0)
    tokens, logprobs = generate(server, prompt_ids, image, temperature=temperature, top_p=1.0, top_k=-1,
                                max_tokens=12)
    assert len(tokens) == len(logprobs) == 12  # a random model does not stop: the budget ends it
    recomputed = forward_logprobs(server, prompt_ids, tokens, image, temperature)
    assert torch.max(torch.abs(recomputed - torch.tensor(logprobs))).item() < 1e-3


def test_top_k_logprobs_are_renormalised_over_the_kept_tokens_and_greedy_is_the_argmax(server, image_prompt):
    prompt_ids, image = image_prompt
    torch.manual_seed(1)
    tokens, logprobs = generate(server, prompt_ids, image, temperature=1.0, top_k=5, max_tokens=6)
    full = forward_logprobs(server, prompt_ids, tokens, image, 1.0)
    ids = torch.tensor([prompt_ids + tokens])
    with torch.no_grad():
        logits = server.model(input_ids=ids, attention_mask=torch.ones_like(ids),
                              **server._vision_inputs(prompt_ids, [image])).logits[0, len(prompt_ids) - 1:-1]
    top5 = torch.topk(logits, 5, dim=-1)
    for step, token in enumerate(tokens):
        assert token in top5.indices[step].tolist()  # sampled among the 5 kept
        kept = torch.log_softmax(top5.values[step], dim=-1)[top5.indices[step].tolist().index(token)]
        assert abs(kept.item() - logprobs[step]) < 1e-3 and logprobs[step] > full[step].item()
    greedy, _ = generate(server, prompt_ids, image, temperature=0, max_tokens=6)
    ids = torch.tensor([prompt_ids + greedy])
    with torch.no_grad():
        logits = server.model(input_ids=ids, attention_mask=torch.ones_like(ids),
                              **server._vision_inputs(prompt_ids, [image])).logits[0, len(prompt_ids) - 1:-1]
    assert greedy == logits.argmax(-1).tolist()


def test_weight_sync_changes_what_it_samples_and_unknown_weights_are_named(server, image_prompt):
    prompt_ids, image = image_prompt
    before, _ = generate(server, prompt_ids, image, temperature=0, max_tokens=4)
    state = {name: tensor.clone() for name, tensor in server.model.state_dict().items()}
    head = next(name for name in state if name.endswith("lm_head.weight"))
    moved = {head: state[head].clone()}
    other = next(t for t in range(before[0] + 1, before[0] + 100) if t not in prompt_ids)
    moved[head][other] = 10.0 * state[head][before[0]]  # 10x the (positive) winning logit: `other` wins
    try:
        asyncio.run(server.update_weights(moved, global_steps=7))
        after, _ = generate(server, prompt_ids, image, temperature=0, max_tokens=4)
        assert after[0] == other and server.global_steps == 7
        with pytest.raises(KeyError, match="model.not_a_layer.weight"):
            asyncio.run(server.update_weights({"model.not_a_layer.weight": torch.zeros(1)}))
    finally:
        asyncio.run(server.update_weights({head: state[head]}))
    assert generate(server, prompt_ids, image, temperature=0, max_tokens=4)[0] == before


def test_requests_the_backend_cannot_serve_are_refused_by_name(server, image_prompt):
    prompt_ids, image = image_prompt
    with pytest.raises(ValueError, match="best_of"):
        generate(server, prompt_ids, image, best_of=2)
    with pytest.raises(ValueError, match="image tokens"):
        at = prompt_ids.index(server.model.config.image_token_id)
        generate(server, prompt_ids[:at] + prompt_ids[at + 1:], image, max_tokens=2)  # one image token short
    with pytest.raises(ValueError, match="leaves no room"):
        generate(server, list(range(1100)), None)


def test_the_cpu_platform_names_cpu_gloo_and_ray_cpus():
    from verl.plugin.platform import PlatformRegistry

    platform = PlatformRegistry.get("cpu")()
    assert (platform.device_name, platform.communication_backend_name(), platform.ray_resource_name()) == \
        ("cpu", "gloo", "CPU")
    assert platform.ray_resource_options(1) == {"num_cpus": 1} and platform.current_device() == "cpu"
    assert torch.zeros(2).to(platform.current_device()).device.type == "cpu"
    assert not platform.is_platform_available(use_smi_check=True)  # chosen by VERL_PLATFORM only
    module = platform.device_module
    free, total = module.mem_get_info()
    assert 0 < free <= total and module.memory_reserved() == 0 and module.empty_cache() is None
    assert module.synchronize() is None and module.is_available()
    assert verl_cpu_platform.dedupe_backend("cpu:gloo,cpu:gloo") == "cpu:gloo"
    assert verl_cpu_platform.dedupe_backend("cpu:gloo,cuda:nccl") == "cpu:gloo,cuda:nccl"
    assert verl_cpu_platform.dedupe_backend("cpu:gloo,cpu:mpi") == "cpu:gloo,cpu:mpi"  # left for torch to refuse
    assert verl_cpu_platform.dedupe_backend(None) is None
    from torch.distributed.fsdp import CPUOffloadPolicy

    assert CPUOffloadPolicy(pin_memory=True).pin_memory is False


def test_verls_registries_find_the_plugins():
    from verl.workers.engine.base import EngineRegistry
    from verl.workers.rollout.base import get_rollout_class
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    assert RolloutReplicaRegistry.get("hf") is verl_hf_rollout.HFReplica
    assert get_rollout_class("hf", "async") is verl_hf_rollout.HFServerAdapter
    assert "cpu" in EngineRegistry._engines["language_model"]["fsdp2"]


def test_stop_token_ids_and_stop_strings_end_the_answer_where_vllm_would(server, image_prompt):
    prompt_ids, image = image_prompt
    torch.manual_seed(3)
    free, _ = generate(server, prompt_ids, image, temperature=0, max_tokens=8)
    stop_at = free[3]
    stopped, logprobs = generate(server, prompt_ids, image, temperature=0, max_tokens=8, stop_token_ids=[stop_at])
    assert stopped == free[:free.index(stop_at) + 1] and len(logprobs) == len(stopped)  # the stop token is kept
    text = server.tokenizer.decode(free[2:4])
    by_text, _ = generate(server, prompt_ids, image, temperature=0, max_tokens=8, stop=text)
    assert len(by_text) < len(free) and by_text == free[:len(by_text)]
    assert text in server.tokenizer.decode(by_text)


def test_images_are_processed_with_the_prompts_pixel_bounds(server, image_prompt):
    """verl builds the prompt with data.mm_processor_kwargs and passes them with the request: the server's pixels
    must come from the same bounds (else the image-token count of the prompt is not the image's)."""
    _, image = image_prompt
    bounds = {"min_pixels": 3136, "max_pixels": 3136}
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open the clock app."}]}]
    text = server.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    small = server.processor(text=[text], images=[image], return_tensors="pt", **bounds)["input_ids"][0].tolist()
    out = asyncio.run(server.generate(prompt_ids=small, sampling_params={"max_tokens": 2, "temperature": 0},
                                      request_id="r", image_data=[image], mm_processor_kwargs=bounds))
    assert len(out.token_ids) == 2
    with pytest.raises(ValueError, match="image tokens"):  # without them the image is processed at other bounds
        generate(server, small, image, max_tokens=2)


# ------------------------------------------------------------------ the one-length position-ids bug (any device)


def test_position_ids_of_one_length_are_renested_so_indexing_works():
    """verl 0.9.1 nests (4, seq) position ids over the rope rows when every sequence has one length, then marks the
    sequence dimension ragged: the first index fails (``split_with_sizes``). The plugin's wrapper rebuilds them."""
    import verl_position_ids_fix as fix
    from tensordict import TensorDict

    from verl.utils import tensordict_utils as tu

    assert getattr(tu.maybe_fix_3d_position_ids, "_gui_agent_position_ids_fix", False)  # installed on import
    same = [torch.arange(12).reshape(4, 3) + 100 * i for i in range(3)]  # three sequences of 3 tokens
    bad = torch.nested.as_nested_tensor(same, layout=torch.jagged)
    assert fix.nested_over_rope_rows(bad)
    data = TensorDict({"position_ids": bad}, batch_size=[3])
    tu.maybe_fix_3d_position_ids(data)
    picked = tu.index_select_tensor_dict(data, [2, 0])["position_ids"]
    assert [t.tolist() for t in picked.unbind()] == [same[2].tolist(), same[0].tolist()]
    # unequal lengths are verl's own case: left to verl's function (the sequence dimension is already ragged)
    mixed = [torch.arange(12).reshape(4, 3), torch.arange(8).reshape(4, 2)]
    good = torch.nested.as_nested_tensor(mixed, layout=torch.jagged)
    assert not fix.nested_over_rope_rows(good)
    data = TensorDict({"position_ids": good}, batch_size=[2])
    tu.maybe_fix_3d_position_ids(data)
    assert [t.tolist() for t in tu.index_select_tensor_dict(data, [1])["position_ids"].unbind()] == [mixed[1].tolist()]
    # the verl modules that imported the function by name got the wrapper too
    from verl.workers import engine_workers

    assert engine_workers.maybe_fix_3d_position_ids is tu.maybe_fix_3d_position_ids


# ------------------------------------------------------------------ the hf rollout refuses bad sampling values


@pytest.mark.parametrize(("params", "named"), [
    ({"temperature": -1.0}, "temperature: must be >= 0"), ({"temperature": float("nan")}, "temperature: must be a finite"),
    ({"top_p": 0}, "top_p: must be > 0"), ({"top_p": 1.5}, "top_p: must be <= 1"),
    ({"top_p": float("nan")}, "top_p: must be a finite"), ({"top_k": -2}, "top_k: must be >= -1"),
    ({"max_tokens": 0}, "max_tokens: must be >= 1"), ({"max_tokens": -5}, "max_tokens: must be >= 1"),
    ({"stop": ""}, "stop: must be a string or a list of non-empty strings"),
    ({"stop": ["</tool_call>", ""]}, "stop: must be a string or a list of non-empty strings"),
])
def test_hf_rollout_refuses_out_of_range_sampling_values_by_name(params, named):
    """Round 5, item 3: a request with a value vLLM refuses is refused by name, never turned into something else
    (``temperature=-1`` was greedy, ``top_p=0`` was 1, an empty stop string ended every answer at one token)."""
    server = verl_hf_rollout.HFRolloutServer.__new__(verl_hf_rollout.HFRolloutServer)
    with pytest.raises(ValueError, match=named):
        server._generate([1, 2, 3], dict(params), None)


def test_hf_rollout_refuses_image_tokens_without_an_image():
    server = verl_hf_rollout.HFRolloutServer.__new__(verl_hf_rollout.HFRolloutServer)
    server.model = type("M", (), {"config": type("C", (), {"image_token_id": 151655})()})()
    with pytest.raises(ValueError, match="holds 2 image tokens but the request carries no image"):
        server._vision_inputs([5, 151655, 151655, 6], None)
    assert server._vision_inputs([5, 6], None) == {}  # a text prompt without images is fine
