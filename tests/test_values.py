"""heapscope.values: the one place text becomes values (sizes, ints, bools, k=v lists)."""

import pytest

from heapscope.values import (BadValue, format_size, parse_assignments, parse_bool, parse_int,
                              parse_qualified, parse_size)


def test_sizes_take_binary_suffixes():
    assert parse_size("65536") == 65536
    assert parse_size("64K") == parse_size("64k") == parse_size("64KB") == parse_size("64KiB") == 65536
    assert parse_size("2M") == 2 << 20 and parse_size("1G") == 1 << 30 and parse_size("1T") == 1 << 40
    assert parse_size(" 100B ") == 100
    for bad in ("1.5K", "abc", "K", "", "1e3", "64Q", "0x10"):
        with pytest.raises(BadValue, match="not a size"):
            parse_size(bad)


def test_format_size_is_read_back_exactly():
    for n in (0, 1, 1000, 4096, 65536, 3 << 20, 1 << 40, (1 << 30) + 7):
        assert parse_size(format_size(n)) == n
    assert format_size(1 << 40) == "1T" and format_size(65536) == "64K" and format_size(1000) == "1000"


def test_ints_and_bools_are_strict():
    assert parse_int("12") == 12 and parse_int("-3") == -3 and parse_int(" +7 ") == 7
    for bad in ("1.5", "abc", "1e3", "", "٣", "12x"):
        with pytest.raises(BadValue):
            parse_int(bad)
    assert parse_bool("Yes") is True and parse_bool("off") is False and parse_bool("1") is True
    with pytest.raises(BadValue, match="not true or false"):
        parse_bool("maybe")


def test_assignment_lists_and_qualified_names():
    assert parse_assignments("seed=3, steps=500,") == {"seed": "3", "steps": "500"}
    assert parse_assignments("") == {}
    with pytest.raises(BadValue, match="expected key=value"):
        parse_assignments("seed")
    assert parse_qualified("bsd-buckets.pagesize=1K") == ("bsd-buckets", "pagesize", "1K")
    for bad in ("pagesize=1", "tlsf.chunk", ".x=1", "tlsf.=1"):
        with pytest.raises(BadValue, match="STRATEGY.NAME=VALUE"):
            parse_qualified(bad)
