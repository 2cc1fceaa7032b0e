"""Mind2Web in SeeClick's JSON layout (``mind2web_data_{train,test_task,test_website,test_domain}.json``).

One episode per item: ``annotation_id``, ``confirmed_task``, ``action_reprs`` and ``actions`` with
``action_uid``, ``operation {op, value}`` (CLICK / TYPE / SELECT) and ``bbox {x, y, width, height}`` in
ORIGINAL pixels of the screenshot ``<annotation_id>-<action_uid>.jpg`` (from ``--images``). Steps without a
``bbox`` (the target was not found in the snapshot) are skipped as ``no target bbox``, as SeeClick does. The
history of a step is the previous steps' ``action_reprs`` strings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.data.ingest._common import handle, image_candidates, input_files, iter_json_records, load_image, make_action
from core.data.ingest._common import number
from core.data.summary import ConversionSummary
from core.geometry import box_center, xywh_to_xyxy
from core.schema import HistoryItem, Step, StepValidationError

_OPS = {"CLICK": "click", "TYPE": "type", "SELECT": "select"}


def image_name(annotation_id: str, action_uid: str) -> str:
    """SeeClick's screenshot file name of a step."""
    return f"{annotation_id}-{action_uid}.jpg"


def step_to_step(ep: dict[str, Any], act: dict[str, Any], *, record: str, history: tuple[HistoryItem, ...],
                 images_dir: Path | None, record_dir: Path, split: str, index: int) -> Step:
    op = act.get("operation") or {}
    if not isinstance(op, dict):
        raise StepValidationError(record, "operation", f"expected {{op, value}}, got {op!r:.200}")
    kind = _OPS.get(str(op.get("op", "")).upper())
    if kind is None:
        raise StepValidationError(record, "operation.op", f"unknown operation {op.get('op')!r}")
    b = act["bbox"]
    if not isinstance(b, dict):
        raise StepValidationError(record, "bbox", f"expected {{x, y, width, height}}, got {b!r:.200}")
    bbox = xywh_to_xyxy([number(record, f"bbox.{k}", b.get(k)) for k in ("x", "y", "width", "height")])
    image, size = load_image(record, image_candidates(
        image_name(str(ep.get("annotation_id")), str(act.get("action_uid"))),
        images_dir=images_dir, record_dir=record_dir))
    if kind == "click":
        action = make_action(record, "bbox", type="click", point=box_center(bbox))
    else:
        action = make_action(record, "operation.value", type=kind, text=str(op.get("value") or "") or None)
    reprs = ep.get("action_reprs") or []
    return Step.build(
        record, id=record, image=image, image_size=size, instruction=str(ep.get("confirmed_task") or ""),
        history=history, task_type="high", action=action, bbox=bbox, source="mind2web", group="web",
        split=split,
        extra={"annotation_id": ep.get("annotation_id"), "action_uid": act.get("action_uid"), "step_index": index,
               "website": ep.get("website"), "domain": ep.get("domain"), "subdomain": ep.get("subdomain"),
               "action_repr": reprs[index] if index < len(reprs) else None},
    )


def read_mind2web(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                  summary: ConversionSummary) -> Iterator[Step]:
    """Steps of a SeeClick Mind2Web JSON file (or every ``.json`` under a folder), ORIGINAL pixels."""
    for path in input_files(Path(input_path), (".json",)):
        split = path.stem.removeprefix("mind2web_data_")
        for i, ep in iter_json_records(path):
            try:
                if isinstance(ep, StepValidationError):
                    raise ep
                if not isinstance(ep, dict):
                    raise StepValidationError(f"{path.name}:{i}", "record",
                                              f"expected an episode object, got {type(ep).__name__}")
                actions, reprs = ep.get("actions") or [], ep.get("action_reprs") or []
                if not isinstance(actions, list) or not isinstance(reprs, list):
                    raise StepValidationError(f"{ep.get('annotation_id')}", "actions",
                                              "actions and action_reprs must be lists")
            except StepValidationError as e:
                summary.read += 1
                handle(e, skip_missing=skip_missing, summary=summary)
                continue
            for index, act in enumerate(actions):
                summary.read += 1
                if not isinstance(act, dict):
                    handle(StepValidationError(f"{ep.get('annotation_id')}:{index}", "actions",
                                               f"expected an action object, got {type(act).__name__}"),
                           skip_missing=skip_missing, summary=summary)
                    continue
                record = f"{ep.get('annotation_id')}:{act.get('action_uid', index)}"
                history = tuple(HistoryItem(description=str(r)) for r in reprs[:index])
                if "bbox" not in act:
                    summary.skip("no target bbox", record)
                    continue
                try:
                    yield step_to_step(ep, act, record=record, history=history, images_dir=images_dir,
                                       record_dir=path.parent, split=split, index=index)
                except StepValidationError as e:
                    handle(e, skip_missing=skip_missing, summary=summary)


__all__ = ["image_name", "read_mind2web"]
