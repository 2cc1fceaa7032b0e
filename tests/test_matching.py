"""core.matching: each fact of "is this action right?" on hand-checked cases, across frames."""

from __future__ import annotations

import pytest

from core.geometry import Frame
from core.matching import POINT_RADIUS, Predicted, match
from core.records import GoldRecord, GoldRecordError, from_reward_inputs

BOX = GoldRecord(action="click", frame=Frame.ORIGINAL, box=(100.0, 200.0, 300.0, 400.0), image_size=(1000, 2000),
                 resized_size=(500, 1000))
POINT = GoldRecord(action="long_press", frame=Frame.ORIGINAL, point=(500.0, 1000.0), image_size=(1000, 2000))


def test_box_edges_count_and_distances_are_fractions_of_the_screen():
    edge = match(Predicted("click", (300.0, 400.0)), BOX)
    assert edge.in_box and edge.distance == 0 and edge.ok
    out = match(Predicted("click", (400.0, 400.0)), BOX)  # 100 px right of the box: 0.1 of the width
    assert not out.in_box and out.distance == pytest.approx(0.1) and not out.ok
    assert out.centre_distance == pytest.approx(((200 / 1000) ** 2 + (100 / 2000) ** 2) ** 0.5)
    resized = match(Predicted("click", (150.0, 150.0), frame=Frame.RESIZED), BOX)  # = (300, 300) original
    assert resized.in_box and resized.ok
    grid = match(Predicted("CLICK", (200.0, 150.0), frame=Frame.GRID1000), BOX)
    assert grid.type_ok and grid.in_box


def test_point_target_uses_the_14_percent_radius():
    near = match(Predicted("long_press", (500.0 + 0.13 * 1000, 1000.0)), POINT)
    far = match(Predicted("long_press", (500.0 + 0.15 * 1000, 1000.0)), POINT)
    assert near.in_box is None and near.point_ok and near.ok and POINT_RADIUS == 0.14
    assert far.distance == pytest.approx(0.15) and not far.point_ok and not far.ok
    missing = match(Predicted("long_press", None), POINT)
    assert missing.type_ok and not missing.ok
    with pytest.raises(GoldRecordError, match="image_size"):
        match(Predicted("long_press", (1.0, 1.0)), GoldRecord(action="long_press", frame=Frame.RESIZED,
                                                                point=(1.0, 1.0)))


def test_type_text_and_direction():
    typed = from_reward_inputs({"action": "type", "gt_bbox": [-100, -100], "input_text": "shanghai mall"})
    assert typed.box is None and typed.point is None
    assert match(Predicted("type", text="Shanghai Mall"), typed).ok
    wrong = match(Predicted("type", text="beijing"), typed)
    assert wrong.type_ok and wrong.text_score == 0.0 and not wrong.ok
    assert not match(Predicted("select", text="shanghai mall"), typed).type_ok
    scroll = from_reward_inputs({"action": "scroll", "gt_bbox": [-100, -100], "input_text": "Down"})
    assert match(Predicted("scroll", direction="down"), scroll).direction_ok
    assert not match(Predicted("scroll", direction="up"), scroll).ok
    assert match(Predicted("enter"), from_reward_inputs({"action": "press_enter"})).ok
