"""GRPO with trl's ``GRPOTrainer`` on the ``gui-agent data convert --to vlmr1`` dataset (``<name>.hf``).

    python VLM-R1/grpo.py --config recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml \\
        --model_name_or_path Qwen/Qwen2.5-VL-3B-Instruct --dataset Data/vlmr1/gui-r1-3k.hf --output_dir saves/grpo-trl

Presets are recipe files (``recipes/<model>/grpo/config_*_trl.yaml``, trl's ``--config`` YAML, each value with its
source): ``config_guir1_trl.yaml`` (GUI-R1's values, 8 GPUs), ``config_guir1_trl_1gpu.yaml`` (one 80 GB GPU,
DeepSpeed ZeRO-3 offload), ``config_vlmr1_trl.yaml`` (VLM-R1's REC defaults). Every ``GRPOConfig`` field is also
a flag; flags win over the file. Without a recipe, trl 0.29.1's own defaults apply (note: ``beta`` 0, no KL).
Precision: trl loads the policy and the reference model in fp32 and ``--bf16`` (on by default on CUDA, off on
CPU) is bf16 autocast; the master weights and AdamW stay fp32. Images are resized by the processor within the
recipe's ``min_pixels``/``max_pixels`` (the bounds the export used, so exported images are left untouched).
``--lora_r N`` trains a LoRA adapter instead of the full model. Rewards are the functions of ``VLM-R1/rewards.py``
(names from ``REWARD_FUNCS``), scored by :mod:`core.rewards` against the dataset's ``ground_truth`` column; their
knobs come from ``$GUI_REWARD_OPTIONS`` (checked when the rewards load, before any model or data). A reward may also
be any trl reward function loaded by path, ``path/to/file.py:function`` (as EasyR1 loads ``compute_score``).
A reward file that does not import (a syntax error, an exception) is one ``error:`` line naming it, before the model
loads; an ``async`` reward stays ``async``. ``--reward_shuffle true`` makes the run a shuffled-reward control: every
batch's real reward values are permuted among its completions (seeded by ``--seed``), sync or async rewards alike.

Bad input (an unknown recipe key, a value of the wrong type, a ``GRPOConfig`` check, a bad reward option, a missing
dataset) stops with one ``error:`` line naming the key, flag or path, exit status 2.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("torch", "transformers", "trl", "datasets")

REWARDS_FILE = Path(__file__).resolve().parent / "rewards.py"
#: This script's defaults where trl's differ (recipe values live in recipes/; these are about logging only).
SCRIPT_DEFAULTS = {"logging_steps": 1, "report_to": "none"}
#: The vlmr1 export's columns the trainer and core.rewards read (ground truth in the model frame).
REQUIRED_COLUMNS = ("prompt", "image", "ground_truth", "extra_info")


class ScriptError(SystemExit):
    """Bad input to the script; :func:`run` prints it as one ``error:`` line and exits 2."""


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(metadata={"help": "Model folder or Hub id (Qwen2.5-VL / Qwen3-VL)."})
    dataset: str = field(metadata={"help": "The vlmr1 export's <name>.hf folder (datasets.save_to_disk); several "
                                           "joined with ':' are concatenated (VLM-R1's data_paths)."})
    eval_dataset: str | None = field(default=None, metadata={"help": "Optional <name>-test.hf for evaluation."})
    reward_funcs: list[str] = field(default_factory=lambda: ["r1gui_format", "r1gui_accuracy"],
                                    metadata={"help": "Names from VLM-R1/rewards.py REWARD_FUNCS, or "
                                                      "path/to/file.py:function for any trl reward function."})
    reward_shuffle: bool = field(default=False, metadata={
        "help": "Control run: permute the real reward values within each batch (same values, wrong completions; "
                "seeded by --seed)."})
    max_samples: int | None = field(default=None, metadata={"help": "Use only the first N training rows."})
    min_pixels: int | None = field(default=None, metadata={
        "help": "Processor smart_resize lower bound (pixels); the export's --min-pixels. None: the model's own."})
    max_pixels: int | None = field(default=None, metadata={
        "help": "Processor smart_resize upper bound (pixels); the export's --max-pixels. None: the model's own."})
    nsr_lambda: float | None = field(default=None, metadata={
        "help": "Negative samples (arXiv 2506.01347; 0.1 there): every completion of a group whose completions all "
                "failed gets the advantage -lambda instead of trl's 0 (core.rl.groups). Unset: off."})
    success_reward: str = field(default="r1gui_accuracy", metadata={
        "help": "With --nsr_lambda or --difficulty_window: the reward function (a --reward_funcs name) whose value "
                "> 0 is a success."})
    difficulty_window: int = field(default=0, metadata={
        "help": "Online difficulty filter (core.rl.difficulty): a prompt whose last N outcomes all agree (pass rate 0 "
                "or 1) is passed over by the sampler for --difficulty_skip_steps steps. 0: off."})
    difficulty_skip_steps: int = field(default=4, metadata={"help": "With --difficulty_window: steps set aside."})
    lora_r: int = field(default=0, metadata={"help": "LoRA rank; 0 trains the full model."})
    lora_alpha: int = field(default=16, metadata={"help": "LoRA alpha (with --lora_r)."})
    lora_dropout: float = field(default=0.05, metadata={"help": "LoRA dropout (with --lora_r)."})


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reward_by_path(ref: str):
    """The function ``name`` of the Python file ``path`` in ``ref`` = ``path:name``."""
    path, _, name = ref.rpartition(":")
    if not Path(path).is_file():
        raise ScriptError(f"--reward_funcs {ref}: no file {path}")
    try:
        module = _load_module(Path(path), f"reward_file_{Path(path).stem}")
    except SyntaxError as e:  # the file's own line, not this script's traceback
        raise ScriptError(f"--reward_funcs {ref}: {path}, line {e.lineno}: {e.msg}") from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - whatever the file raises on import: one line
        raise ScriptError(f"--reward_funcs {ref}: importing {path} raised {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:200]}") from None
    func = getattr(module, name, None)
    if not callable(func):
        raise ScriptError(f"--reward_funcs {ref}: {path} has no function {name!r}")
    return func


def load_reward_funcs(names: list[str]) -> list:
    """The named trl reward functions of ``VLM-R1/rewards.py`` (loaded by path: VLM-R1/ is not a package), or
    ``path/to/file.py:function`` for a function of any file."""
    module = _load_module(REWARDS_FILE, "vlmr1_rewards")
    unknown = [n for n in names if n not in module.REWARD_FUNCS and ".py:" not in n]
    if unknown or not names:
        raise ScriptError(f"--reward_funcs: unknown {unknown or 'empty list'}; known: {sorted(module.REWARD_FUNCS)} "
                          "or path/to/file.py:function")
    from core.rewards.adapters import checked_options

    for name in names:  # each picked reward takes $GUI_REWARD_OPTIONS: checked now, not at the first batch
        if name in module.REWARD_FUNCS:
            try:
                checked_options(name)
            except ValueError as e:
                raise ScriptError(f"$GUI_REWARD_OPTIONS: {e}") from None
    return [module.REWARD_FUNCS[n] if n in module.REWARD_FUNCS else _reward_by_path(n) for n in names]


def reward_functions(script: ScriptArguments, seed: int) -> list:
    """``--reward_funcs``, wrapped by :func:`core.rewards.adapters.shuffled_within_batch` (seeded by ``seed``) for a
    ``--reward_shuffle`` control run."""
    funcs = load_reward_funcs(script.reward_funcs)
    if not script.reward_shuffle:
        return funcs
    from core.rewards.adapters import shuffled_within_batch

    return shuffled_within_batch(funcs, seed)


def load_split(path: str, flag: str):
    """``load_from_disk`` with a clear error when the folder is missing or not a vlmr1 export."""
    from datasets import Dataset, load_from_disk

    if not Path(path, "dataset_info.json").is_file():
        raise ScriptError(f"{flag} {path}: not a saved dataset (write one with gui-agent data convert --to vlmr1)")
    ds = load_from_disk(path)
    if not isinstance(ds, Dataset):
        raise ScriptError(f"{flag} {path}: a DatasetDict; pass the split's own folder")
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise ScriptError(f"{flag} {path}: missing column(s) {missing}; a vlmr1 export has {list(REQUIRED_COLUMNS)}")
    if len(ds) == 0:
        raise ScriptError(f"{flag} {path}: the dataset is empty")
    return ds


def load_processor(script: ScriptArguments):
    """The model's processor with the recipe's pixel bounds (``None`` keeps the model's own), padding and truncating
    on the left as trl's own default processor does: trl left-pads the prompt ids itself but takes the processor's
    per-token ``mm_token_type_ids`` as padded, so a right-padding tokenizer (Qwen2.5-VL's default) misaligns them
    and generation fails in ``get_rope_index`` as soon as one batch holds prompts of different lengths."""
    from transformers import AutoProcessor

    bounds = {k: v for k, v in (("min_pixels", script.min_pixels), ("max_pixels", script.max_pixels)) if v}
    return AutoProcessor.from_pretrained(script.model_name_or_path, padding_side="left", truncation_side="left",
                                         **bounds)


def peft_config(script: ScriptArguments):
    """A LoRA config on every linear layer (peft's ``all-linear``) when ``--lora_r`` > 0, else None (full)."""
    if script.lora_r <= 0:
        return None
    from peft import LoraConfig

    return LoraConfig(r=script.lora_r, lora_alpha=script.lora_alpha, lora_dropout=script.lora_dropout,
                      target_modules="all-linear", task_type="CAUSAL_LM")


def parse(argv: list[str] | None = None):
    """``(ScriptArguments, GRPOConfig)`` from flags and ``--config recipe.yaml`` (flags win)."""
    import torch
    from trl import GRPOConfig, TrlParser

    import yaml

    parser = TrlParser((ScriptArguments, GRPOConfig))
    parser.set_defaults(**SCRIPT_DEFAULTS, bf16=torch.cuda.is_available())

    def error(message: str) -> None:  # argparse's own: usage + message; ours: the message naming the flag/key
        raise ScriptError(message)

    parser.error = error
    try:
        return parser.parse_args_and_config(argv)
    except yaml.YAMLError as e:
        raise ScriptError(f"--config: not valid YAML: {' '.join(str(e).split())}") from None
    except (ValueError, TypeError) as e:  # trl's unknown config keys, GRPOConfig.__post_init__ checks
        unknown = re.match(r"Unknown arguments from config file: (\[.*?\])", str(e))
        if unknown:
            keys = ", ".join(k.lstrip("-") for k in re.findall(r"'(--[^']+)'", unknown.group(1)))
            raise ScriptError(f"--config: unknown key(s) {keys} (neither a GRPOConfig field nor a script "
                              f"argument)") from None
        raise ScriptError(" ".join(str(e).split())) from None


def load_splits(paths: str, flag: str, max_samples: int | None = None):
    """:func:`load_split` of each ``':'``-separated path, concatenated in order (then the first ``max_samples``)."""
    from datasets import concatenate_datasets

    parts = [load_split(p, flag) for p in paths.split(":") if p]
    if not parts:
        raise ScriptError(f"{flag}: no dataset path given")
    ds = parts[0] if len(parts) == 1 else concatenate_datasets(parts)
    return ds.select(range(min(max_samples, len(ds)))) if max_samples else ds


def difficulty_sampler(base, tasks: list[str], difficulty, step):
    """trl's ``RepeatSampler`` order with the prompts whose task ``difficulty`` (:class:`core.rl.difficulty.
    DifficultyFilter`) sets aside at ``step()`` passed over: the base sampler's shuffled prompt order is read chunk by
    chunk, set-aside prompts are skipped (at most one pass over the data a chunk, then taken anyway), and each chunk
    of ``batch_size`` prompts is repeated as trl repeats it (``repeat_count`` times, each prompt
    ``mini_repeat_count`` times in a row). ``skipped`` counts the prompts passed over."""
    from itertools import islice

    from torch.utils.data import Sampler

    per_prompt, width, repeats = base.mini_repeat_count, base.batch_size, base.repeat_count

    class DifficultySampler(Sampler):
        skipped = 0

        def __len__(self) -> int:
            return len(base)

        def __iter__(self):
            stream = iter(base)

            def prompts():  # the base's prompt order: the first pass of each repeated chunk, one per prompt
                while len(block := list(islice(stream, width * per_prompt * repeats))) == width * per_prompt * repeats:
                    yield from block[: width * per_prompt: per_prompt]

            order = prompts()
            while True:
                chunk, passed = [], []
                for index in order:
                    if len(passed) < len(tasks) and difficulty.is_skipped(tasks[index], step()):
                        passed.append(index)
                        DifficultySampler.skipped += 1
                        continue
                    chunk.append(index)
                    if len(chunk) == width:
                        break
                chunk += passed[: width - len(chunk)]  # the data ran out: set-aside prompts after all
                if len(chunk) < width:
                    return
                for _ in range(repeats):
                    for index in chunk:
                        yield from [index] * per_prompt

    return DifficultySampler()


def trainer_class(script: ScriptArguments):
    """trl's ``GRPOTrainer``, or a subclass with the RL methods the flags name (docs/rl-algorithms.md):

    - ``--nsr_lambda``: trl computes its group-relative advantages as usual, then ``_generate_and_score_completions``
      (trl's own step that returns them) gives ``-lambda`` to every completion of a group where the
      ``--success_reward`` function is 0 for all (:func:`core.rl.groups.all_fail_rows`); logged as
      ``nsr/all_fail_frac``.
    - ``--difficulty_window``: the train sampler (trl's ``_get_train_sampler``) passes over prompts whose task the
      filter (:class:`core.rl.difficulty.DifficultyFilter`, fed each generation batch's successes) has set aside;
      logged as ``difficulty/skipped_prompts`` and ``difficulty/tasks_set_aside``. The sampler decides a batch
      ahead of its use (the dataloader reads one batch ahead)."""
    from trl import GRPOTrainer

    if script.nsr_lambda is None and not script.difficulty_window:
        return GRPOTrainer
    from core.numbers import NumberError, checked_number
    from core.rl.difficulty import DifficultyFilter
    from core.rl.groups import all_fail_rows, checked_lambda

    try:
        lam = None if script.nsr_lambda is None else checked_lambda(script.nsr_lambda, "--nsr_lambda")
        window = checked_number(script.difficulty_window, "--difficulty_window", minimum=0, integer=True)
        difficulty = DifficultyFilter(window=window, skip_steps=script.difficulty_skip_steps) if window else None
    except (ValueError, NumberError) as e:
        raise ScriptError(str(e).replace("algorithm.difficulty_filter.skip_steps", "--difficulty_skip_steps")) from None

    class RLMethodsGRPOTrainer(GRPOTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if script.success_reward not in self.reward_func_names:
                raise ScriptError(f"--success_reward: {script.success_reward!r} is not one of the run's reward "
                                  f"functions {self.reward_func_names}")
            self._success_column = self.reward_func_names.index(script.success_reward)

        def _get_train_sampler(self, dataset=None):
            base = super()._get_train_sampler(dataset)
            if difficulty is None:
                return base
            data = dataset if dataset is not None else self.train_dataset
            if "id" not in data.column_names:
                raise ScriptError("--difficulty_window needs the dataset's 'id' column (the vlmr1 export's row id)")
            tasks = [f"id:{row_id}" for row_id in data["id"]]  # the vlmr1 export's row id: one task a screen
            self._difficulty_sampler = difficulty_sampler(base, tasks, difficulty, lambda: self.state.global_step)
            return self._difficulty_sampler

        def _calculate_rewards(self, *args, **kwargs):
            self._rewards_per_func = super()._calculate_rewards(*args, **kwargs)  # every process's rows
            return self._rewards_per_func

        def _generate_and_score_completions(self, inputs):
            import torch
            from accelerate.utils import gather_object

            output = super()._generate_and_score_completions(inputs)
            if not self.model.training:
                return output
            success = torch.nan_to_num(self._rewards_per_func[:, self._success_column], nan=0.0).cpu().numpy()
            if lam is not None:
                groups = [i // self.num_generations for i in range(len(success))]
                fail = all_fail_rows(groups, success)
                local = len(output["advantages"])
                start = self.accelerator.process_index * local
                mask = torch.as_tensor(fail[start:start + local], device=output["advantages"].device)
                output["advantages"] = torch.where(mask, torch.full_like(output["advantages"], -lam),
                                                   output["advantages"])
                self._metrics["train"]["nsr/all_fail_frac"].append(float(fail.mean()))
            if difficulty is not None:  # every process sees every outcome, so their samplers skip alike
                tasks = gather_object([f"id:{x.get('id')}" for x in inputs])
                difficulty.update(tasks, success, self.state.global_step)
                step = self.state.global_step + 1
                self._metrics["train"]["difficulty/tasks_set_aside"].append(float(difficulty.skipped_count(step)))
                self._metrics["train"]["difficulty/skipped_prompts"].append(float(self._difficulty_sampler.skipped))
            return output

    return RLMethodsGRPOTrainer


def main(argv: list[str] | None = None) -> None:
    script, config = parse(argv)
    GRPOTrainer = trainer_class(script)
    reward_funcs = reward_functions(script, config.seed)
    train = load_splits(script.dataset, "--dataset", script.max_samples)
    evaluation = load_split(script.eval_dataset, "--eval_dataset") if script.eval_dataset else None
    trainer = GRPOTrainer(model=script.model_name_or_path, reward_funcs=reward_funcs, args=config,
                          train_dataset=train, eval_dataset=evaluation, processing_class=load_processor(script),
                          peft_config=peft_config(script))
    trainer.train(resume_from_checkpoint=config.resume_from_checkpoint)
    trainer.save_model(config.output_dir)


#: Prints trl's own help: every GRPOConfig flag (imports trl, torch and transformers first).
HELP_TRL = "--help-trl"


def script_help() -> str:
    """``--help`` without importing trl, torch or transformers (seconds, not tens of seconds): the script's own
    flags (:class:`ScriptArguments`) and where trl's are listed (:data:`HELP_TRL`)."""
    import argparse
    import dataclasses

    parser = argparse.ArgumentParser(
        prog="grpo.py", description=__doc__.split("\n\n")[0],
        epilog=f"Every field of trl's GRPOConfig is a flag too (--learning_rate, --num_generations, --beta, "
               f"--output_dir ...), and --config FILE reads flags from a recipe YAML; {HELP_TRL} lists them all "
               "(it imports trl, torch and transformers first: about 20 s).")
    for f in dataclasses.fields(ScriptArguments):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if required else (f.default_factory() if f.default is dataclasses.MISSING else f.default)
        extra = {"nargs": "+"} if isinstance(default, list) else {}
        shown = "" if required else f" (default: {' '.join(default) if isinstance(default, list) else default})"
        parser.add_argument(f"--{f.name}", required=required, help=f.metadata.get("help", "") + shown, **extra)
    parser.add_argument(HELP_TRL, action="store_true", help="trl's full help: every GRPOConfig flag.")
    return parser.format_help()


def run(argv: list[str] | None = None) -> int:
    """:func:`main`, with bad input as one ``error:`` line and exit status 2; ``--help`` is :func:`script_help`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if HELP_TRL in argv:
        argv = ["--help"]
    elif "-h" in argv or "--help" in argv:
        print(script_help(), end="")
        return 0
    try:
        main(argv)
        return 0
    except ScriptError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run())
