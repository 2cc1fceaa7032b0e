"""Recipe files: ``recipes/<model>/<method>/config_<name>.yaml``, one complete file per model x method x backend
(open-r1's layout), each value commented with its source. They are the backends' own config formats (a verl hydra
config, a trl ``--config`` YAML, an ms-swift flag YAML), so each backend reads its recipe directly; the data export
reads a recipe's image pixel bounds from here so exported images are never resized again by the processor.
ms-swift recipes are ``swift rlhf|sft RECIPE.yaml`` flag files (swift reads them itself).

    python -m core.recipes export-flags recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml
    # --min-pixels 262144 --max-pixels 1258291  (for gui-agent data convert)
    python -m core.recipes check-reward recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml
    # reward r1gui: options ok   (a reward option typo or a NaN weight: one error line, exit 2, before training)

PyYAML is imported lazily (the rl and llamafactory environments have it; the base install does not need it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

RECIPES_DIR = Path(__file__).resolve().parents[1] / "recipes"


class RecipeError(ValueError):
    """A recipe file is missing, unreadable or lacks a value; the message names the file and the key."""


#: Values (YAML nodes) a recipe may expand to through its aliases: a real recipe has a few hundred, the same
#: nodes reached through ``&anchor`` / ``*alias`` included; a "billion laughs" file expands to billions, and
#: anything that walks or prints it (an error message quoting it) would take minutes and gigabytes.
MAX_RECIPE_NODES = 100_000


def _expanded_nodes(root: Any) -> int:
    """How many nodes the YAML node graph ``root`` expands to when every alias is written out (capped just above
    :data:`MAX_RECIPE_NODES`; an alias inside its own anchor counts as too many). Linear in the distinct nodes."""
    import yaml

    cap = MAX_RECIPE_NODES + 1
    sizes: dict[int, int] = {}

    def size(node: Any) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        sizes[id(node)] = cap  # while it is being counted: reaching it again is a cycle
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
        total = 1
        for child in children:
            total = min(cap, total + size(child))
        sizes[id(node)] = total
        return total

    return size(root)


def load_recipe(path: str | Path) -> dict[str, Any]:
    """The recipe at ``path`` as a dict (YAML mapping)."""
    try:
        import yaml
    except ImportError as e:  # base install
        raise RecipeError("reading a recipe needs PyYAML (in .venvs/rl and .venvs/llamafactory)") from e
    path = Path(path)
    if not path.is_file():
        raise RecipeError(f"{path}: recipe file not found")
    loader = yaml.SafeLoader(path.read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()  # the node graph: an alias is the anchored node again, not a copy
        if node is not None and _expanded_nodes(node) > MAX_RECIPE_NODES:
            raise RecipeError(f"{path}: its YAML aliases expand to more than {MAX_RECIPE_NODES:,} values (an alias "
                              f"bomb, or an alias inside itself); write the values out")
        data = loader.construct_document(node) if node is not None else None
    except RecursionError:
        raise RecipeError(f"{path}: YAML nested too deeply") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a YAML mapping")
    return data


def pixel_bounds(recipe: dict[str, Any], source: str = "recipe") -> tuple[int, int]:
    """``(min_pixels, max_pixels)`` of the images the recipe trains on, whichever backend format it is in:
    verl ``data.mm_processor_kwargs.{min,max}_pixels``, LLaMA-Factory ``image_{min,max}_pixels``, ms-swift
    ``ENV.{MIN,MAX}_PIXELS``, or top-level ``{min,max}_pixels`` (``VLM-R1/grpo.py``'s script arguments). Pixels of
    the stored image (width x height)."""
    env = recipe.get("ENV") or {}
    candidates = (
        (recipe.get("data") or {}).get("mm_processor_kwargs") or {},
        {"min_pixels": recipe.get("image_min_pixels"), "max_pixels": recipe.get("image_max_pixels")},
        {"min_pixels": env.get("MIN_PIXELS"), "max_pixels": env.get("MAX_PIXELS")},
        recipe,
    )
    for block in candidates:
        low, high = block.get("min_pixels"), block.get("max_pixels")
        if low is not None or high is not None:
            if not (isinstance(low, int) and isinstance(high, int) and 0 < low <= high):
                raise RecipeError(f"{source}: min_pixels {low!r} / max_pixels {high!r}: need integers 0 < min <= max")
            return low, high
    raise RecipeError(f"{source}: no pixel bounds (data.mm_processor_kwargs, image_min/max_pixels or min/max_pixels)")


def recipe_pixel_bounds(path: str | Path) -> tuple[int, int]:
    """:func:`pixel_bounds` of the recipe file at ``path``."""
    return pixel_bounds(load_recipe(path), source=str(path))


def check_verl_reward(recipe: dict[str, Any], source: str = "recipe") -> str:
    """The reward a verl recipe trains with (``reward.custom_reward_function``: ``name`` ``compute_score`` with
    ``reward_kwargs.reward``, or a reward's own name), its ``reward_kwargs`` and ``$GUI_REWARD_OPTIONS`` checked by
    :func:`core.rewards.adapters.checked_options` before training starts; returns the reward's name.
    :class:`RecipeError` naming the file and the key otherwise."""
    from core.rewards.adapters import checked_options
    from core.rewards.registry import REWARDS

    section = (recipe.get("reward") or {}).get("custom_reward_function") or {}
    kwargs = {k: v for k, v in dict(section.get("reward_kwargs") or {}).items()
              if k not in ("reward_router_address", "reward_model_tokenizer")}  # verl's own, never the reward's
    name = section.get("name") or "compute_score"
    reward = kwargs.pop("reward", "r1gui") if name == "compute_score" else name
    if reward not in REWARDS:
        key = "reward_kwargs.reward" if name == "compute_score" else "name"
        raise RecipeError(f"{source}: reward.custom_reward_function.{key}: unknown reward {reward!r}; "
                          f"known: {', '.join(REWARDS)}")
    try:
        checked_options(reward, kwargs)
    except ValueError as e:
        raise RecipeError(f"{source}: reward.custom_reward_function.reward_kwargs (with $GUI_REWARD_OPTIONS): "
                          f"{e}") from None
    return reward


USAGE = "usage: python -m core.recipes export-flags|check-reward RECIPE.yaml"


def main(argv: list[str] | None = None) -> int:
    """``export-flags RECIPE``: the pixel bounds as ``data convert`` flags; ``check-reward RECIPE``: a verl
    recipe's reward and options checked (``make grpo-verl`` runs it before training)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("export-flags", "check-reward"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if args[0] == "check-reward":
            print(f"reward {check_verl_reward(load_recipe(args[1]), args[1])}: options ok")
            return 0
        low, high = recipe_pixel_bounds(args[1])
    except RecipeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"--min-pixels {low} --max-pixels {high}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
