"""Zoom (crop-then-ground), ``gui-agent infer --zoom SHARE``: the two-stage test-time zoom-in of recent GUI
grounding work (ZoomClick, arXiv 2512.05941; ClawGUI-Eval's "Zoom paradigm" after the MAI-UI grounding guide;
docs/inference.md names the sources).

1. The model answers on the whole screenshot (the ordinary request).
2. A crop of ``SHARE`` of the screenshot's width and height (:func:`core.geometry.zoom_box`: ``round(SHARE * W)``
   x ``round(SHARE * H)`` ORIGINAL pixels, centred on the first point, shifted to lie inside the image) is shown
   instead, resized by the same pixel bounds, with the same prompt rendered for the crop's size.
3. The second answer, parsed in the crop's frame to crop pixels, is mapped back to ORIGINAL pixels of the
   screenshot: ``x = x1 + u * w_c / w~_c`` for an answer ``u`` in the resized crop's pixels (``w_c`` the crop's
   width, ``w~_c`` its width after resize; the same for y), i.e. :func:`core.geometry.from_crop` of the crop-pixel
   point. The mapped point is not clamped: an answer outside the crop lands outside it.

Only grounding rows are zoomed. Navigation rows keep their one answer (the crop would hide the screen the next
action is chosen on); so does a row whose first answer has no point (unparseable, an action without a point) or
refuses (:func:`core.regions.refuses`: a refusal action, or OSWorld-G's negative point ``[-1, -1]``), or whose
second answer has none. Each row of a zoom run says what happened in its ``zoom`` record
(:func:`zoom_record`); a second request that fails to generate (a server error) is the row's ``error``, so
``--retry-failed`` redoes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.geometry import ImageGeometry, from_crop, zoom_box, zoom_size
from core.inference.backends import Backend
from core.inference.requests import InferenceRequest, ResizePolicy, build_request
from core.inference.rows import parse_answer
from core.regions import refuses
from core.schema import Step

#: ``zoom.note`` of a navigation row (it keeps its one answer).
NAVIGATION_NOTE = "navigation row: answered once on the whole screen (zoom is for grounding rows)"


def zoom_record(share: float, *, first_coord: list[float] | None = None, note: str | None = None) -> dict[str, Any]:
    """The ``zoom`` field of a prediction row, before the second stage:

    - ``share``: the crop's share of the screenshot's width and height (``--zoom``);
    - ``used``: whose answer the row's ``pred_action``/``pred_coord``/``pred_input_text``/``parse_*`` fields hold,
      ``second`` (the crop's, mapped back) or ``first`` (the whole screen's); None when there is no answer;
    - ``first_coord``: the first answer's point, [x, y] ORIGINAL pixels (None: it had none);
    - ``crop``: [x1, y1, x2, y2] ORIGINAL pixels, x2/y2 exclusive (None: no second stage);
    - ``crop_resized_size``: [W, H] pixels of the crop as the model saw it;
    - ``second_pred``: the second raw answer (the row's ``pred`` stays the first one, which ``resize`` describes);
    - ``second_coord``: its point in the crop's pixels, [x, y] (``pred_coord`` is ``crop[:2]`` + this);
    - ``note``: why a row kept its first answer or has none, else None.
    """
    return {"share": share, "used": None, "first_coord": first_coord, "crop": None, "crop_resized_size": None,
            "second_pred": None, "second_coord": None, "note": note}


def zoom_in(backend: Backend, pairs: Sequence[tuple[InferenceRequest, dict[str, Any]]], share: float) -> None:
    """The second stage for one batch, in place: ``pairs`` are the first-stage requests and their prediction rows
    (``core.inference.runner.prediction_row``); every row gets its ``zoom`` record, and the zoomed rows their
    final ``pred_*`` fields (ORIGINAL pixels). One ``generate`` call for all crops of the batch. Model output
    never raises here: an answer without a point only leaves a note."""
    second: list[tuple[InferenceRequest, dict[str, Any], dict[str, Any]]] = []
    for req, row in pairs:
        record = row["zoom"] = zoom_record(share, first_coord=row["pred_coord"])
        if row["error"] is None and row["pred"] is not None:
            record["used"] = "first"
        if req.step.task_type != "grounding":
            record["note"] = NAVIGATION_NOTE
        elif row["error"] is not None:
            record["note"] = "the first request failed (see error): no second stage"
        elif row["pred_coord"] is None:
            why = row["parse_error"] or f"a {row['pred_action']} action has no point"
            record["note"] = f"the first answer has no point ({why}): kept, no crop"
        elif refuses(row["pred_action"], row["pred_coord"]):  # e.g. OSWorld-G's [-1, -1]: nothing to zoom on
            record["note"] = "the first answer refuses (core.regions.refuses): kept, no crop"
        else:
            try:
                box = zoom_box(row["pred_coord"], *req.step.image_size, share)
            except ValueError as e:  # a point that is no finite number
                record["note"] = f"no crop around the first point ({e}): the first answer is kept"
                continue
            crop_req = build_request(req.step, template=req.template, policy=req.policy, crop=box)
            if not crop_req.ok:  # e.g. a crop past smart_resize's aspect-ratio limit
                record["note"] = f"the crop could not be shown ({crop_req.error}): the first answer is kept"
                continue
            record.update(crop=list(box), crop_resized_size=[crop_req.geometry.resized_width,
                                                             crop_req.geometry.resized_height])
            second.append((crop_req, row, record))
    gens = backend.generate([crop_req for crop_req, _, _ in second]) if second else []
    for (crop_req, row, record), gen in zip(second, gens, strict=True):
        if gen.error is not None:
            row["error"] = f"zoom, second request: {gen.error}"
            record.update(used=None, note="the second request failed (see error)")
            continue
        record["second_pred"] = gen.text
        fields, action = parse_answer(gen.text or "", crop_req)
        if action is None or action.point is None:
            why = fields["parse_error"] or f"a {fields['pred_action']} action has no point"
            record["note"] = f"the second answer has no point ({why}): the first answer is kept"
            continue
        record["second_coord"] = fields["pred_coord"]
        x, y = from_crop(fields["pred_coord"], crop_req.crop)
        row.update(fields, pred_coord=[x, y])
        record["used"] = "second"


def second_answer(record: Mapping[str, Any], max_side: int) -> tuple[str, ImageGeometry, tuple[int, int, int, int]]:
    """What a prediction row's ``zoom`` record (:func:`zoom_record`, ``used`` ``second``) says of its second answer:
    the raw text, the geometry it was given in (the crop's ORIGINAL pixels resized to ``crop_resized_size``, so a
    parser's frame maps to crop pixels) and the crop, whose :func:`from_crop` takes a crop-pixel point back to the
    screenshot as :func:`zoom_in` does. ``ValueError`` naming the field when the record (read from a file) does not
    hold them: sides are integers in 1..``max_side``."""
    text, crop, resized = record.get("second_pred"), record.get("crop"), record.get("crop_resized_size")
    if not isinstance(text, str):
        raise ValueError("zoom.second_pred: no second raw answer")

    def ints(value: object, n: int, field: str) -> list[int]:
        if not (isinstance(value, (list, tuple)) and len(value) == n
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= max_side for v in value)):
            raise ValueError(f"zoom.{field}: expected {n} integers in 0..{max_side}, got {value!r}")
        return list(value)

    x1, y1, x2, y2 = ints(crop, 4, "crop")
    rw, rh = ints(resized, 2, "crop_resized_size")
    if x2 <= x1 or y2 <= y1 or rw == 0 or rh == 0:
        raise ValueError(f"zoom: an empty crop {crop!r} or resized size {resized!r}")
    return text, ImageGeometry(x2 - x1, y2 - y1, rw, rh), (x1, y1, x2, y2)


def dry_run_zoom(step: Step, policy: ResizePolicy, share: float) -> dict[str, Any]:
    """What ``--dry-run`` shows of the zoom settings for ``step``: the share and, for a grounding row, the crop's
    size in ORIGINAL pixels and as the model will see it (where it lies depends on the first answer)."""
    if step.task_type != "grounding":
        return {"share": share, "note": NAVIGATION_NOTE}
    cw, ch = zoom_size(*step.image_size, share)
    try:
        geo = policy.geometry(cw, ch)
    except ValueError as e:  # past smart_resize's aspect-ratio limit: such a row keeps its first answer
        return {"share": share, "crop_size": [cw, ch], "note": f"the crop cannot be shown: {e}"}
    return {"share": share, "crop_size": [cw, ch], "crop_resized_size": [geo.resized_width, geo.resized_height],
            "crop_centre": "the first answer's point, shifted to keep the crop inside the screenshot"}


__all__ = ["NAVIGATION_NOTE", "dry_run_zoom", "second_answer", "zoom_in", "zoom_record"]
