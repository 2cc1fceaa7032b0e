"""core.rollout.sft: scripted agent-curriculum episodes as SFT conversations in the agent recipe's format, and the
check that matters: LLaMA-Factory's qwen3_vl_nothink template turns them into exactly the token ids the Qwen3-VL
chat template gives verl's gui_agent loop (so SFT trains the format RL and evaluation use)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from core.agent_recipe import AgentRecipe
from core.rollout.sft import (SHAREGPT_TAGS, Transcript, scripted_transcripts, sharegpt_messages, tools_system_text,
                              write_llamafactory_sft)
from core.world import get_task
from core.world.curriculum import AGENT_FAMILIES

ROOT = Path(__file__).resolve().parents[1]
DEMO_RECIPE = ROOT / "experiments" / "demo_agent" / "recipe.yaml"
LF_PYTHON = ROOT / ".venvs" / "llamafactory" / "bin" / "python"
#: The first agent_train task of every family (the split lists seed by seed).
TASKS = [f"{family}-4000000" for family in AGENT_FAMILIES]
#: Gold plan lengths (docs/curriculum.md).
ACTIONS = {"go_back": 1, "scroll_direction": 1, "open_app_tile": 1, "open_app_then_back": 2, "scroll_two_ways": 2,
           "open_two_apps": 3}


@pytest.fixture(scope="module")
def recipe() -> AgentRecipe:
    return AgentRecipe.load(DEMO_RECIPE)


@pytest.fixture(scope="module")
def transcripts(recipe) -> list[Transcript]:
    return list(scripted_transcripts([get_task(t) for t in TASKS], recipe))


@pytest.fixture(scope="module")
def processor():
    pytest.importorskip("transformers")
    from transformers import AutoProcessor

    from core.testing import tiny_qwen3vl_path

    return AutoProcessor.from_pretrained(tiny_qwen3vl_path())


def test_transcripts_are_the_loops_turns(transcripts, recipe):
    for t in transcripts:
        family = t.task_id.rsplit("-", 1)[0]
        n = ACTIONS[family]
        assert t.success, t.task_id
        assert [m["role"] for m in t.messages] == ["user"] + ["assistant", "tool"] * (n - 1) + ["assistant"]
        assert len(t.images) == n
        assert all(max(im.size) * min(im.size) <= recipe.max_screenshot_pixels for im in t.images)
        assert all(m["content"].count("<tool_call>") == 1 for m in t.messages if m["role"] == "assistant")
        first = t.messages[0]["content"]
        assert first[0]["type"] == "image" and first[1]["text"].startswith("Task: ")


def test_sharegpt_rows_files_and_dataset_info(tmp_path, transcripts):
    failed = Transcript(task_id="go_back-1", seed=0, messages=transcripts[0].messages, success=False)
    counts = write_llamafactory_sft([*transcripts, failed], tmp_path, name="agent", system="SYSTEM")
    turns = sum(ACTIONS.values())
    assert counts == {"episodes": len(TASKS), "turns": turns, "images": turns, "failed": 1}
    rows = [json.loads(line) for line in (tmp_path / "agent.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == TASKS
    for row in rows:
        assert row["messages"][0] == {"role": "system", "content": "SYSTEM"}
        text = "".join(m["content"] for m in row["messages"])
        assert text.count("<image>") == len(row["images"])
        assert all((tmp_path / p).is_file() for p in row["images"])
    info = json.loads((tmp_path / "dataset_info.json").read_text())
    assert info["agent"]["tags"] == SHAREGPT_TAGS and info["agent"]["formatting"] == "sharegpt"
    write_llamafactory_sft(transcripts[:1], tmp_path, name="other", system="S")  # a second dataset: both listed
    assert set(json.loads((tmp_path / "dataset_info.json").read_text())) == {"agent", "other"}


def test_system_text_is_the_templates_tool_turn(processor, recipe):
    system = tools_system_text(processor.tokenizer, recipe)
    assert system.startswith("# Tools\n") and '"name": "mobile_use"' in system and "<|im_" not in system
    full = processor.apply_chat_template([{"role": "user", "content": "hi"}], tools=recipe.tool_schemas(),
                                         tokenize=False)
    assert full.startswith(f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\nhi")

    class PlainTemplate:
        def apply_chat_template(self, messages, **kwargs):
            return "".join(m["content"] for m in messages)

    with pytest.raises(ValueError, match="no <\\|im_start\\|>system turn"):
        tools_system_text(PlainTemplate(), recipe)


LF_ENCODE = r"""
import json, sys
from PIL import Image
from transformers import AutoProcessor, AutoTokenizer
from llamafactory.data.template import get_template_and_fix_tokenizer
from llamafactory.hparams import DataArguments

model, rows_file, max_pixels = sys.argv[1], sys.argv[2], int(sys.argv[3])
tok = AutoTokenizer.from_pretrained(model)
proc = AutoProcessor.from_pretrained(model)
for key, value in (("image_max_pixels", max_pixels), ("image_min_pixels", 1024), ("video_max_pixels", max_pixels),
                   ("video_min_pixels", 1024), ("video_fps", 2.0), ("video_maxlen", 4)):
    setattr(proc, key, value)  # what LLaMA-Factory's loader sets from its data arguments
template = get_template_and_fix_tokenizer(tok, DataArguments(template="qwen3_vl_nothink"))
out = []
for row in json.load(open(rows_file)):
    system, *turns = row["messages"]
    role = {"user": "user", "assistant": "assistant", "tool": "observation"}
    conv = [{"role": role[m["role"]], "content": m["content"]} for m in turns]
    images = [Image.open(p) for p in row["images"]]
    msgs = template.mm_plugin.process_messages(conv, images, [], [], proc)
    pairs = template.encode_multiturn(tok, msgs, system["content"], None)
    out.append([i for source, target in pairs for i in source + target])
print(json.dumps(out))
"""


@pytest.mark.skipif(not LF_PYTHON.exists(), reason="needs .venvs/llamafactory (make setup)")
def test_llamafactory_encodes_the_loops_token_ids(tmp_path, transcripts, processor, recipe):
    """Every family's scripted episode: LLaMA-Factory's ids (its qwen3_vl_nothink template and Qwen3-VL image
    plugin, run in its own environment) equal the Qwen3-VL chat template's (what verl's agent loop renders)."""
    from core.testing import tiny_qwen3vl_path

    system = tools_system_text(processor.tokenizer, recipe)
    rows, expected = [], []
    for k, t in enumerate(transcripts):
        paths = []
        for j, image in enumerate(t.images):
            paths.append(str(tmp_path / f"{k}_{j}.png"))
            image.save(paths[-1])
        rows.append({"messages": sharegpt_messages(t, system), "images": paths})
        text = processor.apply_chat_template(t.messages, tools=recipe.tool_schemas(), tokenize=False)
        expected.append(processor(text=[text], images=t.images, return_tensors="pt").input_ids[0].tolist())
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    proc = subprocess.run([str(LF_PYTHON), "-c", LF_ENCODE, str(tiny_qwen3vl_path()), str(tmp_path / "rows.json"),
                           str(recipe.max_screenshot_pixels)], capture_output=True, text=True, timeout=600,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "DISABLE_VERSION_CHECK": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for t, ids, want in zip(transcripts, got, expected, strict=True):
        assert ids == want, t.task_id
        assert ids.count(processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")) > 0


def test_demo_sft_data_shows_each_start_screen_with_several_goals(tmp_path, recipe):
    """make demo-agent's SFT data (experiments/demo_agent/run.py): each task's episode plus per_screen - 1 others
    on the same first screenshot with other goals and other gold answers; go_back has no other goal."""
    pytest.importorskip("transformers")
    from core.interpreter import load_script
    from core.testing import tiny_qwen3vl_path

    run = load_script("demo_agent_run", ROOT / "experiments" / "demo_agent" / "run.py")
    ids = ["go_back-4000000", "scroll_direction-4000000", "open_two_apps-4000000"]
    counts = run.write_sft_data(recipe, tiny_qwen3vl_path(), ids, tmp_path, "agent_sft", per_screen=3)
    assert counts["episodes"] == 1 + 3 + 3 and counts["failed"] == 0
    rows = [json.loads(line) for line in (tmp_path / "agent_sft.jsonl").read_text().splitlines()]
    assert len(rows) == 7
    for group in (rows[1:4], rows[4:7]):
        first_images = {(tmp_path / r["images"][0]).read_bytes() for r in group}
        assert len(first_images) == 1  # one start screenshot
        assert len({r["messages"][1]["content"] for r in group}) == 3  # three goals
        assert len({json.dumps(r["messages"][2:]) for r in group}) == 3  # three gold episodes
    assert len({r["messages"][2]["content"] for r in rows[1:4]}) == 3  # three directions in the first answer
    assert run.write_sft_data(recipe, tiny_qwen3vl_path(), ids[:1], tmp_path / "one", "x")["episodes"] == 1
