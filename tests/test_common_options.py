"""Option parsing shared by subcommands: the range message must describe the range it enforces."""

from __future__ import annotations

import argparse

import pytest

from trainkb.commands._common import seconds


@pytest.mark.parametrize("text", ["0", "-1", "604801", "nan", "inf"])
def test_a_duration_out_of_range_is_refused_with_an_exact_range(text):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        seconds(text)
    message = str(refused.value)
    assert "more than 0 and at most 604800" in message and "between" not in message
    assert message.endswith(f"got {text!r}")


def test_a_week_is_the_longest_duration_accepted():
    assert seconds("604800") == 604800.0 and seconds("0.5") == 0.5
