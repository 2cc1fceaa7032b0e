"""A verl 0.9.1 bug on any device, met from outside verl: a Qwen2.5-VL / Qwen3-VL batch whose sequences all have one
length crashes the actor update with ``split_with_sizes expects split_sizes to sum exactly to ...``.

Why: the 3-D (mrope) position ids of a batch are nested per sequence as ``(4, seq_len)`` tensors with
``torch.nested.as_nested_tensor`` (verl's agent-loop writer through ``list_of_dict_to_tensordict``, the legacy path in
``verl/workers/utils/padding.py:67``). torch makes the dimension that varies the ragged one: the sequence when lengths
differ, but the 4 rope rows when no length varies. ``verl/utils/tensordict_utils.py:910``
(``maybe_fix_3d_position_ids``, called before every actor pass) then declares the sequence dimension ragged
(``_ragged_idx = 2``) over offsets that count rope rows, and the first index fails. A random tiny model (every answer
at the length cap) meets it at once on one prompt; the DAPO launch of tests/test_verl_cpu_training.py on two.

The fix: :func:`fix_3d_position_ids` wraps verl's function; position ids nested over the rope rows (values of 4 rows
a sequence stacked along dim 0, offsets counting them) are rebuilt with verl's own
``nested_tensor_from_tensor_list(..., ragged_idx=2)`` (the sequence dimension ragged, as for unequal lengths);
anything else goes to verl's function unchanged. verl imports this module in every process when
``VERL_USE_EXTERNAL_MODULES`` names it (``verl/main_ppo.sh`` does, on every device); the wrapper replaces the
function in ``verl.utils.tensordict_utils`` and in every verl module already holding it. Upstream fix: nest the
position ids with ``nested_tensor_from_tensor_list(position_ids_list, ragged_idx=2)`` where they are built.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

#: Rope rows of Qwen-VL's 3-D position ids (temporal, height, width + the text row verl adds).
ROPE_ROWS = 4


def nested_over_rope_rows(position_ids: Any) -> bool:
    """Whether nested ``(batch, 4, seq)`` position ids were nested over the rope rows (every sequence of one
    length): values stacked as ``(batch * 4, seq)`` with offsets 0, 4, 8, ... In the right layout the values are
    ``(4, total seq)``; with one sequence of 4 tokens both read the same and nothing needs rebuilding."""
    if not getattr(position_ids, "is_nested", False) or position_ids.dim() != 3:
        return False
    values, offsets = position_ids.values(), position_ids.offsets()
    batch = len(offsets) - 1
    rows = offsets.diff()
    return (values.dim() == 2 and values.shape[0] == ROPE_ROWS * batch and bool((rows == ROPE_ROWS).all())
            and not (batch == 1 and values.shape[1] == ROPE_ROWS))


def fix_3d_position_ids(original):
    """verl's ``maybe_fix_3d_position_ids`` with the rope-row layout rebuilt first (module docstring)."""
    if getattr(original, "_gui_agent_position_ids_fix", False):
        return original

    @functools.wraps(original)
    def maybe_fix_3d_position_ids(data):
        if "position_ids" in data.keys() and nested_over_rope_rows(data["position_ids"]):
            from verl.utils.tensordict_utils import nested_tensor_from_tensor_list

            rows = list(data["position_ids"].values().split(ROPE_ROWS))  # one (4, seq) tensor a sequence
            data["position_ids"] = nested_tensor_from_tensor_list(rows, ragged_idx=2)
            return None
        return original(data)

    maybe_fix_3d_position_ids._gui_agent_position_ids_fix = True
    return maybe_fix_3d_position_ids


def install() -> None:
    """Put the wrapper in ``verl.utils.tensordict_utils`` and in every loaded verl module that imported the
    function by name (idempotent)."""
    from verl.utils import tensordict_utils

    wrapped = fix_3d_position_ids(tensordict_utils.maybe_fix_3d_position_ids)
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "") or ""
        if (name == "verl" or name.startswith("verl.")) and \
                getattr(module, "maybe_fix_3d_position_ids", None) is not None and \
                not getattr(module.maybe_fix_3d_position_ids, "_gui_agent_position_ids_fix", False):
            module.maybe_fix_3d_position_ids = wrapped


install()
