"""The estimate of a request's tokens and a route's calibration from its last real usage
(translators/features/estimate.py)."""

from __future__ import annotations

from translators.features.estimate import HIGHEST, LOWEST, calibrated, calibration, estimate


def test_the_estimate_is_four_characters_a_token_of_the_body_at_least_one():
    assert estimate({"a": "x" * 392}) == 100  # 400 characters of JSON
    assert estimate({}) == 1


def test_the_calibration_is_the_real_input_over_the_estimate():
    assert calibration(1500, 1000) == 1.5
    assert calibrated(2000, 1.5) == 3000
    assert calibrated(2000, None) == 2000


def test_a_usage_that_says_nothing_gives_no_calibration():
    assert calibration(None, 1000) is None
    assert calibration(0, 1000) is None
    assert calibration(500, 0) is None


def test_a_calibration_far_off_is_bounded():
    assert calibration(1, 1000) == LOWEST
    assert calibration(100_000, 10) == HIGHEST
