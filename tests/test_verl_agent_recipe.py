"""verl/examples/run_qwen3_vl_8b_gui_agent_{gpu,npu}.sh: the recipe's published defaults (verl GUI-agent README,
../shared/seeds/verl-gui-agent-recipe-README.md), composed with verl 0.9.1's own hydra config and validated by
it; the tool YAML and agent-loop YAML they name load through verl's registries; make grpo-verl-agent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env
pytest.importorskip("verl")
pytest.importorskip("gymnasium")

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = {d: REPO / "verl" / "examples" / f"run_qwen3_vl_8b_gui_agent_{d}.sh" for d in ("gpu", "npu")}
# The recipe README's "Key Parameters" / "GRPO-specific Settings" tables, per device.
PUBLISHED = {
    "algorithm.adv_estimator": "grpo", "algorithm.use_kl_in_reward": False,
    "actor_rollout_ref.rollout.n": 5, "actor_rollout_ref.actor.use_kl_loss": True,
    "actor_rollout_ref.actor.kl_loss_coef": 0.01, "actor_rollout_ref.rollout.multi_turn.max_assistant_turns": 20,
}
PER_DEVICE = {
    "gpu": {"data.train_batch_size": 512, "actor_rollout_ref.rollout.tensor_model_parallel_size": 2,
            "actor_rollout_ref.rollout.enforce_eager": False, "trainer.device": "cuda"},
    "npu": {"data.train_batch_size": 256, "actor_rollout_ref.rollout.tensor_model_parallel_size": 4,
            "actor_rollout_ref.rollout.enforce_eager": True, "trainer.device": "npu"},
}


def overrides(device: str, *extra: str, env: dict | None = None) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("TP", "TRAIN_BATCH_SIZE", "ENFORCE_EAGER", "GRID")}
    proc = subprocess.run(["bash", str(SCRIPTS[device]), *extra], capture_output=True, text=True, check=True,
                          env={**clean, "PRINT_ARGS": "1", "DATA_DIR": "/data/ga", "ROLLOUT_ENGINE": "vllm",
                               **(env or {})})
    return proc.stdout.splitlines()


def compose(args: list[str]):
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=args)


@pytest.mark.parametrize("device", ["gpu", "npu"])
def test_run_script_has_the_recipe_defaults_and_passes_verls_validation(device: str) -> None:
    from omegaconf import OmegaConf
    from verl.trainer.main_ppo import validate_config

    cfg = compose(overrides(device))
    for key, value in {**PUBLISHED, **PER_DEVICE[device]}.items():
        assert OmegaConf.select(cfg, key) == value, key
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == "gui_agent"
    assert cfg.actor_rollout_ref.rollout.multi_turn.enable is True
    assert cfg.data.train_files == "/data/ga/train.parquet"
    validate_config(config=cfg, use_reference_policy=True, use_critic=False)

    sys.path.insert(0, str(REPO / "verl" / "gui_agent"))
    import gui_agent_loop

    gui = gui_agent_loop.GUIAgentConfig.from_mapping(cfg.gui_agent)  # the recipe file's values (README: 20, 999)
    assert cfg.gui_agent.recipe == str(REPO / "verl" / "gui_agent" / "recipe.yaml")
    assert (gui.max_turns, gui.grid, gui.on_invalid, gui.aggregation) == (20, "grid999", "end", "mean")


def test_knobs_and_the_recipe_file_reach_the_config_and_the_tool(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    from omegaconf import OmegaConf
    from verl.tools.tool_registry import initialize_tools_from_config

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text((REPO / "verl" / "gui_agent" / "recipe.yaml").read_text()
                      .replace("grid: grid999", "grid: pixels").replace("max_turns: 20", "max_turns: 8"))
    env = {"RECIPE": str(recipe), "MICRO_BATCH": "2", "PARAM_OFFLOAD": "True", "CHUNKED_PREFILL": "False",
           "ROLLOUT_N": "8"}
    cfg = compose(overrides("gpu", "trainer.save_freq=7", env=env))
    assert OmegaConf.select(cfg, "actor_rollout_ref.actor.fsdp_config.param_offload") is True
    assert cfg.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu == 2
    assert cfg.actor_rollout_ref.rollout.enable_chunked_prefill is False
    assert (cfg.actor_rollout_ref.rollout.n, cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns,
            cfg.trainer.save_freq) == (8, 8, 7)
    sys.path.insert(0, str(REPO / "verl" / "gui_agent"))
    import gui_agent_loop

    assert gui_agent_loop.GUIAgentConfig.from_mapping(cfg.gui_agent).max_turns == 8
    # the tool YAML reads the same file (the scripts export GUI_AGENT_RECIPE; verl resolves ${oc.env:...})
    monkeypatch.setenv("GUI_AGENT_RECIPE", str(recipe))
    (tool,) = initialize_tools_from_config(cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path)
    assert (tool.grid.name, tool.max_steps) == ("pixels", 8)
    monkeypatch.delenv("GUI_AGENT_RECIPE")  # unset: the recipe file beside the tool
    (tool,) = initialize_tools_from_config(cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path)
    assert (tool.grid.name, tool.max_steps, tool.recipe.source) == (
        "grid999", 20, str(REPO / "verl" / "gui_agent" / "recipe.yaml"))


def test_agent_loop_yaml_registers_gui_agent() -> None:
    import hydra
    from omegaconf import OmegaConf

    sys.path.insert(0, str(REPO / "verl" / "gui_agent"))
    (entry,) = OmegaConf.load(REPO / "verl" / "gui_agent" / "agent_loop.yaml")
    assert entry.name == "gui_agent"
    assert hydra.utils.get_class(entry._target_).__name__ == "GUIAgentLoop"
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    import gui_agent_loop  # noqa: F401 - @register at import

    assert _agent_loop_registry["gui_agent"]["_target_"] == "gui_agent_loop.GUIAgentLoop"


def test_make_grpo_verl_agent_dry_run(tmp_path: Path) -> None:
    (tmp_path / "train.parquet").write_bytes(b"")

    def dry(*args: str) -> str:
        proc = subprocess.run(["make", "-n", "-o", ".venvs/rl/.ready", "grpo-verl-agent", *args], cwd=REPO,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = dry(f"AGENT_DATA={tmp_path}")
    assert "MODEL_PATH=Qwen/Qwen3-VL-8B-Instruct" in out and "run_qwen3_vl_8b_gui_agent_gpu.sh" in out
    out = dry(f"AGENT_DATA={tmp_path}", "MODEL=my/Qwen3-VL-2B", "AGENT_DEVICE=npu", "ARGS=trainer.save_freq=5")
    assert "MODEL_PATH=my/Qwen3-VL-2B" in out and "run_qwen3_vl_8b_gui_agent_npu.sh trainer.save_freq=5" in out


def test_make_grpo_verl_agent_dry_run_and_engine_switch(tmp_path: Path) -> None:
    (tmp_path / "train.parquet").write_bytes(b"")
    proc = subprocess.run(["make", "-n", "-o", ".venvs/rl/.ready", "grpo-verl-agent", f"AGENT_DATA={tmp_path}",
                           "DRY_RUN=1"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0 and "import vllm" not in proc.stdout and "DRY_RUN=1" in proc.stdout
    engines = {e: overrides("gpu", env={"ROLLOUT_ENGINE": e}) for e in ("vllm", "sglang")}
    assert "actor_rollout_ref.rollout.name=vllm" in engines["vllm"]
    assert "actor_rollout_ref.rollout.name=sglang" in engines["sglang"]
    cfg = compose(engines["sglang"])
    from verl.trainer.main_ppo import validate_config

    validate_config(config=cfg, use_reference_policy=True, use_critic=False)
