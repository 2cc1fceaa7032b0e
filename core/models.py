"""Where model weights come from: a local folder, or a Hugging Face Hub id resolved in the local Hub cache.

``gui-agent model download ID`` (``make download-model MODEL=ID``) fills the cache with huggingface_hub's own
``snapshot_download``: ``$HF_HUB_CACHE`` (default ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``), folder
``models--<org>--<name>/snapshots/<commit>/``. Every framework here (transformers, trl, verl, vLLM, LLaMA-Factory,
ms-swift with ``--use_hf true``) resolves the same Hub id in that cache with ``HF_HUB_OFFLINE=1``, so targets take
the Hub id unchanged. ``gui-agent model check`` is the pre-flight of every make target that takes a model: it
fails in one line, exit 2, before a framework would die in a long traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from core.interpreter import require


class ModelNotFound(Exception):
    """The model is neither a local folder nor a usable Hub id; the message says what to do (one line)."""


@dataclass(frozen=True)
class ModelSource:
    """Where a model reference points: ``kind`` is ``local`` (a folder), ``cache`` (a Hub id found in the local
    cache, ``path`` its snapshot folder) or ``hub`` (a Hub id left to the framework to download: online mode)."""

    kind: str
    path: Path | None


def is_local_path(model: str) -> bool:
    """True when ``model`` names a file-system path rather than a Hub id (``org/name`` or a bare ``name``)."""
    return (model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model
            or Path(model).expanduser().exists())


def hub_cache() -> Path:
    """The Hub cache folder huggingface_hub uses now ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_offline() -> bool:
    """huggingface_hub's offline switch (HF_HUB_OFFLINE; every make target but the downloads sets it)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def cached_snapshot(repo_id: str, revision: str | None = None) -> Path | None:
    """The cached snapshot folder of ``repo_id`` (with its ``config.json``), or None when it is not downloaded."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        folder = Path(snapshot_download(repo_id, revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, FileNotFoundError):
        return None
    return folder if (folder / "config.json").is_file() else None


def locate(model: str, variable: str = "MODEL") -> ModelSource:
    """Where ``model`` (the value of make variable ``variable``) is; raises :class:`ModelNotFound`."""
    if not model:
        raise ModelNotFound(f"set {variable}=<local model folder or Hub id, e.g. Qwen/Qwen2.5-VL-3B-Instruct>")
    if is_local_path(model):
        path = Path(model).expanduser()
        if not path.is_dir():
            raise ModelNotFound(f"{variable}={model}: no such folder (a local model folder, or a Hub id such as "
                                f"Qwen/Qwen2.5-VL-3B-Instruct)")
        return ModelSource("local", path)
    snapshot = cached_snapshot(model)
    if snapshot is not None:
        return ModelSource("cache", snapshot)
    if not hub_offline():
        return ModelSource("hub", None)
    raise ModelNotFound(f"{variable}={model} is not in the Hugging Face cache ({hub_cache()}): download it with "
                        f"`make download-model MODEL={model}`, or set {variable}= a local model folder")


def download(repo_id: str, revision: str | None = None) -> Path:
    """Download ``repo_id`` into the Hub cache (huggingface_hub ``snapshot_download``); returns the snapshot folder.
    Raises :class:`ModelNotFound` for a local path, offline mode, an unknown repository or no network."""
    if is_local_path(repo_id):
        raise ModelNotFound(f"MODEL={repo_id} is a local path: nothing to download (targets take it as it is)")
    if hub_offline():
        raise ModelNotFound("HF_HUB_OFFLINE=1 forbids downloads: run `make download-model MODEL=...` (it turns "
                            "offline mode off for the download alone) or unset HF_HUB_OFFLINE")
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        return Path(snapshot_download(repo_id, revision=revision))
    except (RepositoryNotFoundError, RevisionNotFoundError, HFValidationError) as e:
        raise ModelNotFound(f"MODEL={repo_id}: no such model on the Hub ({type(e).__name__}); gated models need "
                            f"`hf auth login` first") from None
    except (HfHubHTTPError, OSError) as e:  # OSError: connection refused / DNS / timeout (requests wraps them)
        reason = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
        raise ModelNotFound(f"downloading {repo_id} needs network access to the Hub ({constants.ENDPOINT}; a mirror: "
                            f"HF_ENDPOINT=...): {reason}") from None


def register(app: typer.Typer) -> None:
    model_app = typer.Typer(help="Model weights: download into the Hub cache, check a model reference.",
                            no_args_is_help=True)

    @model_app.command("download")
    def download_command(
        model: str = typer.Argument(..., help="Hub id, e.g. Qwen/Qwen2.5-VL-3B-Instruct."),
        revision: str = typer.Option(None, "--revision", help="Branch, tag or commit [default: main]."),
    ) -> None:
        """Download a model into the Hugging Face cache; prints the snapshot folder (targets take the Hub id)."""
        require("huggingface_hub", command=f"gui-agent model download {model}")
        try:
            folder = download(model, revision)
        except ModelNotFound as e:
            typer.echo(f"download-model: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"{model}: {folder} (Hub cache {hub_cache()}; make targets take MODEL={model})")

    @model_app.command("check")
    def check_command(
        model: str = typer.Argument("", help="Local model folder or Hub id."),
        target: str = typer.Option("gui-agent", "--target", help="Name printed at the start of the error line."),
        variable: str = typer.Option("MODEL", "--variable", help="Variable the model came from (for the message)."),
    ) -> None:
        """Exit 0 when the model is a local folder or a cached Hub id (or the Hub is reachable: online mode);
        otherwise one line saying how to get it, exit 2."""
        require("huggingface_hub", command=f"gui-agent model check {model}")
        try:
            locate(model, variable)
        except ModelNotFound as e:
            typer.echo(f"{target}: {e}", err=True)
            raise typer.Exit(2) from None

    app.add_typer(model_app, name="model")

