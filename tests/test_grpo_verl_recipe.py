"""The verl GRPO recipe's reward loads through verl's own loader; unknown keys are rejected (the published values
and verl's validation: tests/test_recipes.py)."""

from pathlib import Path

import pytest

pytest.importorskip("verl")
from hydra import compose, initialize_config_dir  # noqa: E402
from hydra.errors import ConfigCompositionException  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "recipes" / "qwen2_5_vl_3b" / "grpo" / "config_guir1_verl.yaml"


def _compose(overrides=()):
    with initialize_config_dir(config_dir=str(RECIPE.parent), version_base=None):
        return compose(config_name=RECIPE.stem, overrides=list(overrides))


def test_recipe_reward_loads_through_verls_own_loader_and_scores():
    from verl.trainer.ppo.reward import get_custom_reward_fn

    cfg = _compose([f"reward.custom_reward_function.path={REPO / 'verl' / 'reward_fn.py'}"])
    fn = get_custom_reward_fn(cfg)
    gt = '{"action": "click", "gt_bbox": [10, 10, 50, 50], "input_text": "no input text"}'
    good = "<think>tap</think><answer>[{'action': 'click', 'point': [20, 30], 'input_text': 'no input text'}]</answer>"
    miss = good.replace("[20, 30]", "[90, 90]")
    hit, missed = fn("gui-r1", good, gt, {}), fn("gui-r1", miss, gt, {})
    assert hit["score"] == 1.0 and missed["score"] == 0.2 and hit.keys() == missed.keys()


def test_unknown_override_is_rejected():
    with pytest.raises(ConfigCompositionException):
        _compose(["actor_rollout_ref.actor.no_such_key=1"])
