"""trl / VLM-R1 GRPO reward functions: ``f(prompts, completions, **columns) -> list[float]``.

Completions may be plain strings or conversations. The dataset needs a ``solution`` (or ``ground_truth``)
column holding GUI-R1's ground-truth JSON, and may carry ``extra_info``. Knobs: build your own with
``trl_reward_func("r1gui", format_weight=0.1, gate_format=True)`` or set ``$GUI_REWARD_OPTIONS``.
For VLM-R1's ``reward_funcs_registry`` use :data:`REWARD_FUNCS`.
"""

from core.rewards.adapters import trl_reward_func

r1gui = trl_reward_func("r1gui")
r1gui_guir1 = trl_reward_func("r1gui_guir1")
r1gui_format = trl_reward_func("r1gui_format")
r1gui_accuracy = trl_reward_func("r1gui_accuracy")
gaussian = trl_reward_func("gaussian")  # GUI-G2's Gaussian point reward with r1gui's format part
gaussian_accuracy = trl_reward_func("gaussian_accuracy")  # its accuracy part (pairs with r1gui_format)
gui_agent = trl_reward_func("gui_agent")
aitw = trl_reward_func("aitw")
r1v_accuracy = trl_reward_func("r1v_accuracy")  # R1-V-GUI-agent's accuracy_reward (experiments/r1v)
r1v_format = trl_reward_func("r1v_format")  # R1-V-GUI-agent's format_reward (the think format)

REWARD_FUNCS = {f.__name__: f for f in (r1gui, r1gui_guir1, r1gui_format, r1gui_accuracy, gaussian, gaussian_accuracy,
                                        gui_agent, aitw, r1v_accuracy, r1v_format)}

__all__ = ["REWARD_FUNCS", "aitw", "gaussian", "gaussian_accuracy", "gui_agent", "r1gui", "r1gui_accuracy",
           "r1gui_format", "r1gui_guir1", "r1v_accuracy", "r1v_format", "trl_reward_func"]
