"""verl's ``cpu`` platform: training with verl 0.9.1 on a machine without an accelerator.

Registered through verl's own extension point, ``verl.plugin.platform.PlatformRegistry.register`` (nothing of
verl is copied or patched). verl imports this module in every process when ``VERL_USE_EXTERNAL_MODULES`` names
it, and picks it when ``VERL_PLATFORM=cpu``; the make targets and run scripts set both on a machine where
``nvidia-smi`` finds no GPU::

    PYTHONPATH=verl/plugins VERL_USE_EXTERNAL_MODULES=verl_cpu_platform,verl_hf_rollout VERL_PLATFORM=cpu \\
        python -m verl.trainer.main_ppo trainer.device=cpu ...

What it names: device ``cpu``, the ``gloo`` collective backend, Ray's ``CPU`` resource (one per worker), no
visible-devices variable; memory, RNG-per-device and profiler calls do nothing (a CPU has no device cache).

Two places in verl 0.9.1 assume an accelerator beside the CPU; neither needs a change to verl's files:

- ``verl/utils/distributed.py:89`` (``initialize_global_process_group_ray``) asks torch for the backend
  ``"cpu:gloo,<device>:<backend>"``, which is ``"cpu:gloo,cpu:gloo"`` here, and torch refuses a device named twice.
  When this platform is selected, :func:`install_backend_string_fix` wraps ``torch.distributed.init_process_group``
  so that a backend string naming one device twice with the same backend is read once (anything else is passed
  through untouched). Upstream fix: build ``"cpu:gloo"`` alone when the device is the CPU.
- ``verl/single_controller/ray/base.py:230`` (``ResourcePoolManager._check_resource_available``) counts only Ray's
  ``GPU`` or ``NPU`` resources. The make targets start Ray with as many logical ``GPU`` tokens as training workers
  (``+ray_kwargs.ray_init.num_gpus=N``: Ray bookkeeping only, no device; the workers themselves ask for ``CPU``).
  Upstream fix: count ``get_platform().ray_resource_name()``.
- ``verl/workers/engine/fsdp/transformer_impl.py:462`` gives forward-only FSDP2 models (the reference policy)
  ``CPUOffloadPolicy(pin_memory=True)``; pinning host memory needs CUDA. When this platform is selected, torch's
  ``CPUOffloadPolicy`` is replaced, before verl imports it, by :class:`UnpinnedCPUOffloadPolicy` (the same policy
  with ``pin_memory`` off: on the CPU the "offloaded" parameters are where they already are). Upstream fix:
  ``pin_memory=get_platform().device_name != "cpu"``. (FSDP1 is not used on CPU: ``transformer_impl.py:441``
  passes ``device_id=get_device_id()``, an integer FSDP1 reads as a CUDA index; the make targets pick FSDP2.)
"""

from __future__ import annotations

from contextlib import contextmanager
from types import ModuleType
from typing import Any

import functools
import os

import torch
import torch.distributed

from verl.plugin.platform import PlatformBase, PlatformRegistry

#: The name ``VERL_PLATFORM`` selects and ``trainer.device`` takes.
PLATFORM = "cpu"


class CPUDeviceModule(ModuleType):
    """What verl calls on ``get_torch_device()`` for the CPU: ``torch.cpu``'s own functions (streams, events,
    synchronize, availability) plus the memory and RNG calls ``torch.cpu`` lacks. Memory counters report 0 (the CPU
    has no device allocator to count), ``mem_get_info`` the host's free and total bytes, cache calls do nothing."""

    def __init__(self) -> None:
        super().__init__("verl_cpu_platform.device_module")

    def __getattr__(self, name: str) -> Any:
        return getattr(torch.cpu, name)

    @staticmethod
    def empty_cache() -> None:
        return None

    @staticmethod
    def ipc_collect() -> None:
        return None

    @staticmethod
    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        return None

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return 0

    memory_reserved = max_memory_allocated = max_memory_reserved = memory_allocated

    @staticmethod
    def reset_peak_memory_stats(device: Any = None) -> None:
        return None

    @staticmethod
    def mem_get_info(device: Any = None) -> tuple[int, int]:
        pages, free = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_AVPHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
        return free * size, pages * size

    @staticmethod
    def get_rng_state(device: Any = None) -> torch.Tensor:
        return torch.get_rng_state()

    @staticmethod
    def set_rng_state(state: torch.Tensor, device: Any = None) -> None:
        torch.set_rng_state(state)

    @staticmethod
    def get_device_name(device: Any = None) -> str:
        return "cpu"


DEVICE_MODULE = CPUDeviceModule()


@PlatformRegistry.register(platform=PLATFORM)
class PlatformCPU(PlatformBase):
    """The host CPU as verl's device: one process per worker, ``gloo`` collectives, Ray ``CPU`` resources."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return DEVICE_MODULE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        # Never auto-detected: verl probes platforms in registration order and this one is always "available";
        # it is chosen only by name (VERL_PLATFORM=cpu).
        return False

    def current_device(self) -> str:
        # verl passes this to `.to(...)` / `device=`; torch reads an integer there as a CUDA index.
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        # No device list to narrow; a name no process sets, so verl's "visible devices" lookups find nothing.
        return "VERL_CPU_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "CPU"

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        # Ray reserves "CPU" for num_cpus (a custom resource of that name is refused).
        return {"num_cpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def dedupe_backend(backend: Any) -> Any:
    """``"cpu:gloo,cpu:gloo"`` -> ``"cpu:gloo"``: a ``device:backend`` list with repeated identical entries read once;
    any other value unchanged (a device given two different backends stays, for torch to refuse)."""
    if not isinstance(backend, str) or "," not in backend:
        return backend
    parts = [part.strip() for part in backend.split(",")]
    unique = list(dict.fromkeys(parts))
    return ",".join(unique) if len(unique) < len(parts) else backend


def install_backend_string_fix() -> None:
    """Wrap ``torch.distributed.init_process_group`` with :func:`dedupe_backend` (idempotent)."""
    init = torch.distributed.init_process_group
    if getattr(init, "_gui_agent_cpu_platform", False):
        return

    @functools.wraps(init)
    def init_process_group(*args: Any, **kwargs: Any):
        if "backend" in kwargs:
            kwargs["backend"] = dedupe_backend(kwargs["backend"])
        elif args:
            args = (dedupe_backend(args[0]), *args[1:])
        return init(*args, **kwargs)

    init_process_group._gui_agent_cpu_platform = True
    torch.distributed.init_process_group = init_process_group


class UnpinnedCPUOffloadPolicy(torch.distributed.fsdp.CPUOffloadPolicy):
    """torch's FSDP2 CPU offload policy with ``pin_memory`` always off (pinning needs CUDA)."""

    def __init__(self, pin_memory: bool = False) -> None:
        super().__init__(pin_memory=False)


def install_unpinned_offload() -> None:
    """Make ``torch.distributed.fsdp.CPUOffloadPolicy`` the unpinned policy; must run before verl's
    ``verl.utils.fsdp_utils`` imports it (checked)."""
    import sys

    torch.distributed.fsdp.CPUOffloadPolicy = UnpinnedCPUOffloadPolicy
    fsdp_utils = sys.modules.get("verl.utils.fsdp_utils")
    if fsdp_utils is not None and fsdp_utils.CPUOffloadPolicy is not UnpinnedCPUOffloadPolicy:
        raise RuntimeError("verl_cpu_platform must be imported before verl.utils.fsdp_utils "
                           "(name it in VERL_USE_EXTERNAL_MODULES)")


def register_fsdp_engines() -> None:
    """verl's FSDP training engines (actor/ref and critic) for device ``cpu``, through ``EngineRegistry.register``
    (verl registers them for ``cuda`` and ``npu`` only; the classes are device-generic: they ask the platform). The
    actor/ref engine is ``verl_response_logprobs.ResponseLogprobEngine`` (the output layer at the trained response
    positions only) unless ``VERL_CPU_RESPONSE_LOGPROBS=0``."""
    import verl_response_logprobs
    from verl.workers.engine.base import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead, FSDPEngineWithValueHead

    lm_engine = verl_response_logprobs.engine_class() if verl_response_logprobs.enabled() else FSDPEngineWithLMHead
    for model_type, engine in (("language_model", lm_engine), ("value_model", FSDPEngineWithValueHead)):
        if PLATFORM not in EngineRegistry._engines.get(model_type, {}).get("fsdp", {}):
            EngineRegistry.register(model_type=model_type, backend=["fsdp", "fsdp2"], device=PLATFORM)(engine)


if os.environ.get("VERL_PLATFORM", "").strip().lower() == PLATFORM:
    install_backend_string_fix()
    install_unpinned_offload()
    register_fsdp_engines()
