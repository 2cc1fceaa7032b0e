import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.geometry import (
    GUIR1_TRAIN_MAX_PIXELS,
    QWEN3VL_FACTOR,
    Frame,
    ImageGeometry,
    normalized_distance,
    point_in_box,
    smart_resize,
    xywh_to_xyxy,
)

sizes = st.integers(min_value=1, max_value=8000)
pixel_limits = st.sampled_from([(3136, 12845056), (3136, GUIR1_TRAIN_MAX_PIXELS), (256 * 28 * 28, 1280 * 28 * 28)])


@settings(max_examples=400, deadline=None)
@given(h=sizes, w=sizes, limits=pixel_limits, factor=st.sampled_from([28, 32]))
def test_smart_resize_matches_transformers(h, w, limits, factor):
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize as reference

    if max(h, w) / min(h, w) > 200:
        with pytest.raises(ValueError):
            smart_resize(h, w, factor, *limits)
        return
    assert smart_resize(h, w, factor, *limits) == reference(h, w, factor, *limits)


@settings(max_examples=300, deadline=None)
@given(h=st.integers(28, 8000), w=st.integers(28, 8000), limits=pixel_limits, factor=st.sampled_from([28, 32]))
def test_smart_resize_matches_qwen_vl_utils(h, w, limits, factor):
    from qwen_vl_utils.vision_process import smart_resize as reference

    if max(h, w) / min(h, w) > 200:
        return
    assert smart_resize(h, w, factor, *limits) == reference(h, w, factor, *limits)


@settings(max_examples=400, deadline=None)
@given(h=st.integers(1, 8000), w=st.integers(1, 8000), limits=pixel_limits, factor=st.sampled_from([28, 32]))
def test_smart_resize_with_qwen_vl_utils_matches_it_on_slivers_too(h, w, limits, factor):
    """``qwen_vl_utils=True`` is qwen-vl-utils' arithmetic for every size, slivers thinner than factor / 2 too
    (where transformers' differs)."""
    from qwen_vl_utils.vision_process import smart_resize as reference

    if max(h, w) / min(h, w) > 200:
        return
    assert smart_resize(h, w, factor, *limits, qwen_vl_utils=True) == reference(h, w, factor, *limits)


def test_smart_resize_known_values():
    # A 1080x2400 phone screenshot at GUI-R1's training budget and at the processor default.
    assert smart_resize(2400, 1080, max_pixels=GUIR1_TRAIN_MAX_PIXELS) == (1652, 728)
    assert smart_resize(2400, 1080) == (2408, 1092)
    h, w = smart_resize(768, 1024, factor=QWEN3VL_FACTOR)
    assert h % 32 == 0 and w % 32 == 0


@settings(max_examples=300, deadline=None)
@given(
    w=st.integers(50, 4000), h=st.integers(50, 4000),
    fx=st.floats(0, 1), fy=st.floats(0, 1),
    src=st.sampled_from(list(Frame)), dst=st.sampled_from(list(Frame)),
)
def test_point_round_trip(w, h, fx, fy, src, dst):
    g = ImageGeometry.for_model(w, h, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    p = g.point((fx * w, fy * h), Frame.ORIGINAL, src)
    back = g.point(g.point(p, src, dst), dst, Frame.ORIGINAL)
    assert math.isclose(back[0], fx * w, abs_tol=1e-6) and math.isclose(back[1], fy * h, abs_tol=1e-6)


@settings(max_examples=300, deadline=None)
@given(
    w=st.integers(50, 4000), h=st.integers(50, 4000),
    box=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
    t=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    frame=st.sampled_from(list(Frame)),
)
def test_point_inside_box_stays_inside_in_every_frame(w, h, box, t, frame):
    x1, x2 = sorted((box[0] * w, box[2] * w))
    y1, y2 = sorted((box[1] * h, box[3] * h))
    # clamp: x1 + 1.0 * (x2 - x1) can round one ulp past x2
    pt = (min(x1 + t[0] * (x2 - x1), x2), min(y1 + t[1] * (y2 - y1), y2))
    g = ImageGeometry.for_model(w, h, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    assert point_in_box(pt, (x1, y1, x2, y2))
    assert point_in_box(g.point(pt, Frame.ORIGINAL, frame), g.box((x1, y1, x2, y2), Frame.ORIGINAL, frame))


def test_frames_of_a_real_screen_size():
    g = ImageGeometry.for_model(1080, 2400, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    assert (g.resized_width, g.resized_height) == (728, 1652)
    assert g.point((540, 1200), "original", "resized") == pytest.approx((364, 826))
    assert g.point((540, 1200), "original", "normalized") == pytest.approx((0.5, 0.5))
    assert g.point((540, 1200), "original", "grid1000") == pytest.approx((500, 500))
    assert g.size("grid1000") == pytest.approx((1000, 1000))


def test_point_in_box_edges_and_distance():
    assert point_in_box((10, 10), (10, 10, 20, 20))
    assert not point_in_box((10, 10), (10, 10, 20, 20), strict=True)
    assert point_in_box((15, 15), (10, 10, 20, 20), strict=True)
    assert normalized_distance((0, 0), (108, 0), 1080, 2400) == pytest.approx(0.1)
    assert xywh_to_xyxy((1, 2, 3, 4)) == (1, 2, 4, 6)


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="positive"):
        smart_resize(0, 100)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 5000)
