"""A GRPO launch checked end to end without a GPU: ``DRY_RUN=1`` on the verl run scripts runs this instead of
``python -m verl.trainer.main_ppo``, with the same arguments.

    python verl/dry_run.py [--config-path DIR --config-name NAME] [hydra overrides ...]

What it does, in the order verl 0.9.1's own entry point does it (``verl/trainer/main_ppo.py`` and its
``TaskRunner``), stopping before the first thing that needs an accelerator (Ray workers, the rollout engine):

1. composes the config with hydra (verl's ``ppo_trainer``, or the recipe file given by ``--config-path`` /
   ``--config-name``, plus the overrides) and runs verl's ``validate_config`` with its own
   ``need_reference_policy`` / ``need_critic``; resolves interpolations; checks the numbers that decide the run
   (:data:`NUMBERS`: finite and in range through ``core.numbers``, the key named: ``lr=nan``, ``rollout.n=0``);
2. builds the tokenizer and processor from ``actor_rollout_ref.model`` through verl's ``HFModelConfig``;
3. loads ``data.train_files`` and ``data.val_files`` through verl's ``create_rl_dataset`` (``RLHFDataset``) and
   reads the first row of each (prompt tokens, images);
4. loads the tool YAML (``multi_turn.tool_config_path``) through verl's tool registry, the agent-loop YAML
   (``rollout.agent.agent_loop_config_path``) and its classes, the ``gui_agent`` section, and the custom reward
   function through verl's ``get_custom_reward_fn``;
5. names the rollout engine (``actor_rollout_ref.rollout.name``: vllm | sglang | hf) and whether it is installed
   here (``hf``, the transformers backend of ``verl/plugins/verl_hf_rollout.py``, always is);
   names verl's trainer (v1 mode, the Ray setup hook that registers a recipe's mode, checked importable) and
   whether verl's v1 trainer's TransferQueue package is installed here.

It prints the values that matter, one ``key: value`` line each, and exits 0; a problem is one ``error:`` line
and exit 2. Run from the repository root with ``verl/gui_agent`` on ``PYTHONPATH`` (the run scripts set it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("hydra", "omegaconf", "verl")
#: Rollout engines this project's launches take (``actor_rollout_ref.rollout.name``): verl 0.9.1's own two and the
#: transformers backend registered by ``verl/plugins/verl_hf_rollout.py``.
ENGINES = ("vllm", "sglang", "hf")


class DryRunError(Exception):
    """A problem the launch would hit: printed as one ``error:`` line."""


def split_config_args(argv: list[str]) -> tuple[str | None, str, list[str]]:
    """(``--config-path``, ``--config-name``, overrides) of a ``main_ppo`` command line (``--key value`` or
    ``--key=value``)."""
    path, name, rest = None, "ppo_trainer", []
    it = iter(argv)
    for arg in it:
        key, eq, value = arg.partition("=")
        if key in ("--config-path", "--config-name"):
            value = value if eq else next(it, "")
            if not value:
                raise DryRunError(f"{key} needs a value")
            if key == "--config-path":
                path = value
            else:
                name = value
        else:
            rest.append(arg)
    return path, name, rest


def compose(argv: list[str]):
    """verl's config composed from a ``main_ppo`` command line, its numbers and sampling values checked
    (:func:`check_numbers`, :func:`check_sampling`), then validated as ``main_ppo.main`` validates it."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    import verl
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    path, name, overrides = split_config_args(argv)
    config_dir = Path(path).resolve() if path else Path(verl.__file__).parent / "trainer" / "config"
    errors = (HydraException, OmegaConfBaseException, ValueError, AssertionError)
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            cfg = hydra_compose(config_name=name, overrides=overrides)
    except errors as e:
        raise DryRunError(f"config: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    check_numbers(cfg)  # ours first: they name the key, where verl's own checks below may not
    check_sampling(cfg)
    try:
        validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
        OmegaConf.resolve(cfg)
    except errors as e:
        raise DryRunError(f"config: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return cfg


#: The numbers of a launch that decide the run, checked by :func:`core.numbers.checked_number` (finite, in range;
#: the error names the key): ``key -> bounds``. A key the config does not hold (or holds as null) is skipped.
NUMBERS: dict[str, dict[str, Any]] = {
    "actor_rollout_ref.actor.optim.lr": {"above": 0},
    "actor_rollout_ref.actor.kl_loss_coef": {"minimum": 0},
    "actor_rollout_ref.actor.entropy_coeff": {"minimum": 0},
    "actor_rollout_ref.actor.clip_ratio": {"above": 0},
    "actor_rollout_ref.actor.ppo_mini_batch_size": {"minimum": 1, "integer": True},
    "actor_rollout_ref.actor.ppo_epochs": {"minimum": 1, "integer": True},
    "actor_rollout_ref.rollout.n": {"minimum": 1, "integer": True},
    "actor_rollout_ref.rollout.gpu_memory_utilization": {"above": 0, "maximum": 1},
    "algorithm.gamma": {"minimum": 0, "maximum": 1},
    "algorithm.lam": {"minimum": 0, "maximum": 1},
    "algorithm.kl_ctrl.kl_coef": {"minimum": 0},
    "data.train_batch_size": {"minimum": 1, "integer": True},
    "data.max_prompt_length": {"minimum": 1, "integer": True},
    "data.max_response_length": {"minimum": 1, "integer": True},
    "trainer.total_epochs": {"minimum": 1, "integer": True},
    "trainer.n_gpus_per_node": {"minimum": 0, "integer": True},
    "trainer.nnodes": {"minimum": 1, "integer": True},
}


def check_numbers(cfg) -> None:
    """Every :data:`NUMBERS` key the config holds is a finite number in its range (``lr=nan``, ``kl_loss_coef=inf``
    and ``rollout.n=0`` stop here, naming the key); DryRunError otherwise."""
    from omegaconf import OmegaConf

    from core.numbers import NumberError, checked_number

    for key, bounds in NUMBERS.items():
        value = OmegaConf.select(cfg, key, default=None)
        if value is None:
            continue
        try:
            checked_number(value, key, **bounds)
        except NumberError as e:
            raise DryRunError(f"config: {e}") from None


def check_sampling(cfg) -> None:
    """The rollout's sampling settings (training and validation) by the rules the hf rollout applies to each request
    (vLLM's: ``core.inference.backends.base.checked_sampling``); DryRunError naming the key."""
    from omegaconf import OmegaConf

    from core.inference.backends.base import checked_sampling

    rollout = "actor_rollout_ref.rollout"
    for prefix in (f"{rollout}.", f"{rollout}.val_kwargs."):
        params = {key: OmegaConf.select(cfg, prefix + key, default=None) for key in ("temperature", "top_p", "top_k")}
        try:
            checked_sampling({k: v for k, v in params.items() if v is not None}, prefix=prefix)
        except ValueError as e:
            raise DryRunError(f"config: {e}") from None


def load_model_io(cfg) -> tuple[Any, Any]:
    """(tokenizer, processor) as verl's TaskRunner builds them."""
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.config import HFModelConfig

    try:
        model: HFModelConfig = omega_conf_to_dataclass(cfg.actor_rollout_ref.model)
    except OSError as e:
        raise DryRunError(f"actor_rollout_ref.model.path={cfg.actor_rollout_ref.model.path}: "
                          f"{str(e).splitlines()[0]}") from None
    return model.tokenizer, model.processor


def load_split(cfg, key: str, tokenizer, processor) -> dict[str, Any]:
    """``data.<key>`` loaded through verl's ``create_rl_dataset``: rows, first row's prompt tokens and images."""
    from verl.trainer.ppo.utils import create_rl_dataset

    files = cfg.data[key]
    for f in [files] if isinstance(files, str) else list(files):
        if not Path(f).is_file():
            raise DryRunError(f"data.{key}: {f} not found")
    ds = create_rl_dataset(files, cfg.data, tokenizer, processor, is_train=key == "train_files",
                           max_samples=cfg.data.get("train_max_samples" if key == "train_files" else "val_max_samples",
                                                    -1))
    if len(ds) == 0:
        raise DryRunError(f"data.{key}: no rows left (filter_overlong_prompts with max_prompt_length="
                          f"{cfg.data.max_prompt_length}?)")
    first = ds[0]
    msgs = first.get("raw_prompt") or []
    images = sum(1 for m in msgs if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "image")
    return {"rows": len(ds), "agent_name": first.get("agent_name"), "first_row_images": images}


def load_agent_parts(cfg) -> dict[str, Any]:
    """The tool YAML, the agent-loop YAML, the ``gui_agent`` section and the custom reward, through verl's loaders."""
    import hydra
    from omegaconf import OmegaConf

    rollout = cfg.actor_rollout_ref.rollout
    out: dict[str, Any] = {}
    tool_path = OmegaConf.select(rollout, "multi_turn.tool_config_path")
    if tool_path:
        from verl.tools.tool_registry import initialize_tools_from_config

        tools = initialize_tools_from_config(tool_path)
        out["tools"] = ", ".join(f"{t.name} (grid {getattr(getattr(t, 'grid', None), 'name', '-')}"
                                 + (f", recipe {t.recipe.source})" if hasattr(t, "recipe") else ")") for t in tools)
    loop_path = OmegaConf.select(rollout, "agent.agent_loop_config_path")
    if loop_path:
        entries = OmegaConf.load(loop_path)
        names = [e.name for e in entries]
        for e in entries:
            hydra.utils.get_class(e._target_)
        default = OmegaConf.select(rollout, "agent.default_agent_loop")
        if default and default not in names:
            raise DryRunError(f"actor_rollout_ref.rollout.agent.default_agent_loop={default}: not in {loop_path} "
                              f"({', '.join(names)})")
        out["agent_loops"] = ", ".join(names)
        out["default_agent_loop"] = default
    if "gui_agent" in cfg:
        from gui_agent_loop import GUIAgentConfig

        gui = GUIAgentConfig.from_mapping(cfg.gui_agent)
        cap = GUIAgentConfig.max_tokens_per_turn(cfg.gui_agent)
        out["gui_agent"] = f"recipe {gui.source}: " + ", ".join(
            f"{k}={getattr(gui, k)}" for k in gui.keys() if k != "prompt") + (f", max_tokens_per_turn={cap}" if cap else "")
        out["gui_agent_prompt"] = repr(gui.prompt)
    if OmegaConf.select(cfg, "reward.custom_reward_function.path"):
        from verl.trainer.ppo.reward import get_custom_reward_fn

        fn = get_custom_reward_fn(cfg)
        name = getattr(getattr(fn, "func", fn), "__name__", "-")  # verl wraps it in functools.partial
        out["reward_function"] = f"{cfg.reward.custom_reward_function.path}:{name}"
    return out


def engine_line(cfg) -> str:
    """The rollout engine and whether it can be imported here."""
    name = str(cfg.actor_rollout_ref.rollout.name)
    if name not in ENGINES:
        raise DryRunError(f"actor_rollout_ref.rollout.name={name}: the recipes run on {', '.join(ENGINES)}")
    if name == "hf":
        return "hf (transformers; installed)"
    install = "GPU extra: make setup-gpu" if name == "vllm" else "install it on the GPU machine; not pinned here"
    here = "installed" if importlib.util.find_spec(name) else f"not installed here ({install})"
    return f"{name} ({here})"


def trainer_line(cfg) -> str:
    """verl's trainer (v1 mode or the legacy one), its Ray setup hook, and whether v1's TransferQueue is here."""
    if not cfg.trainer.get("use_v1", False):
        return "legacy (trainer.use_v1=False)"
    hook = cfg.ray_kwargs.ray_init.runtime_env.get("worker_process_setup_hook")
    if hook:
        module, _, name = str(hook).rpartition(".")
        if importlib.util.find_spec(module) is None:
            raise DryRunError(f"ray_kwargs.ray_init.runtime_env.worker_process_setup_hook={hook}: no module {module}")
        if not callable(getattr(importlib.import_module(module), name, None)):
            raise DryRunError(f"ray_kwargs.ray_init.runtime_env.worker_process_setup_hook={hook}: no function {name}")
    queue = "installed" if importlib.util.find_spec("transfer_queue") else \
        "not installed here (verl's v1 trainer imports it: TransferQueue>=0.1.10, verl's verl-core extra)"
    return f"v1 mode {cfg.trainer.v1.trainer_mode}" + (f", setup hook {hook}" if hook else "") + \
        f"; transfer_queue {queue}"


def rl_line(cfg) -> str:
    """The advantage estimator and the RL methods the run uses (``algorithm``: ``rl_methods.rl_options``, the check
    the trainer makes first); a bad value is a DryRunError naming ``algorithm.<key>``."""
    from omegaconf import OmegaConf

    from rl_methods import rl_options

    algorithm = OmegaConf.to_container(cfg.algorithm, resolve=True)
    try:
        opts = rl_options(algorithm)
    except ValueError as e:
        raise DryRunError(f"config: {e}") from None
    parts = [f"adv_estimator {opts.estimator}"]
    if opts.estimator == "gigpo":
        parts.append("gigpo " + ", ".join(f"{k} {v}" for k, v in opts.gigpo.items()))
    if opts.estimator == "grpo_nsr":
        parts.append(f"nsr_lambda {opts.nsr_lambda:g}")
    dapo = algorithm.get("filter_groups") or {}
    if dapo.get("enable"):
        parts.append(f"dynamic sampling on {dapo.get('metric')}")
    if opts.replay_capacity is not None:
        parts.append(f"success replay (capacity {opts.replay_capacity})")
    if opts.difficulty is not None:
        parts.append("difficulty filter (window {}, skip {} steps)".format(*opts.difficulty))
    return "; ".join(parts)


def dry_run(argv: list[str]) -> dict[str, Any]:
    """Every check above; the printed values."""
    cfg = compose(argv)
    rl_methods = rl_line(cfg)
    engine = engine_line(cfg)  # the cheap checks first: a typo fails before the model and data load
    trainer = trainer_line(cfg)
    if "gui_agent" in cfg:
        from gui_agent_loop import GUIAgentConfig

        GUIAgentConfig.from_mapping(cfg.gui_agent)
        GUIAgentConfig.max_tokens_per_turn(cfg.gui_agent)
    tokenizer, processor = load_model_io(cfg)
    report: dict[str, Any] = {
        "model": cfg.actor_rollout_ref.model.path,
        "processor": type(processor).__name__ if processor is not None else None,
        "rollout_engine": engine,
        "trainer": trainer,
        "rollout_n": cfg.actor_rollout_ref.rollout.n,
        "train_batch_size": cfg.data.train_batch_size,
        "max_prompt_length": cfg.data.max_prompt_length,
        "max_response_length": cfg.data.max_response_length,
        "lr": cfg.actor_rollout_ref.actor.optim.lr,
        "rl_methods": rl_methods,
        "n_gpus": f"{cfg.trainer.n_gpus_per_node} x {cfg.trainer.nnodes} node(s), device {cfg.trainer.device}",
    }
    for key in ("train_files", "val_files"):
        split = load_split(cfg, key, tokenizer, processor)
        report[key] = f"{cfg.data[key]} " + str(split)
        if key == "train_files" and split["rows"] < int(cfg.data.train_batch_size):
            report["warning"] = (f"data.train_batch_size {cfg.data.train_batch_size} is more than the "
                                 f"{split['rows']} rows of data.train_files: verl's dataloader drops the last "
                                 "incomplete batch, so no training step would run; lower data.train_batch_size")
    report.update(load_agent_parts(cfg))
    return report


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):  # before hydra and verl load (a hydra override is never -h)
        print(__doc__)
        return 0
    try:
        report = dry_run(argv)
    except (DryRunError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a dry run answers in one line whatever breaks
        print(f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 2
    for key, value in report.items():
        print(f"{key}: {value}")
    print("dry run: OK (config composed and validated, data, tools, agent loop and reward loaded; no training)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "verl" / "gui_agent"))
    sys.exit(main())
