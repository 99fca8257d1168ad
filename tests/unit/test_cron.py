"""Cron matching (runner/schedule.py): field syntax, the Vixie day rule, time zones and DST."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from croniter import croniter

from runner.schedule import InvalidSchedule, due_minutes, matches, parse, validate

MIN = timedelta(minutes=1)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def hm(minutes: list[datetime]) -> list[str]:
    return [m.strftime("%m-%d %H:%M") for m in minutes]


@pytest.mark.parametrize(
    ("cron", "tz", "minute", "fires"),
    [
        # Vixie: day-of-month and day-of-week both restricted -> either fires
        ("0 0 13 * FRI", "UTC", utc(2024, 9, 13), True),  # Friday the 13th
        ("0 0 13 * FRI", "UTC", utc(2024, 1, 13), True),  # a Saturday, but the 13th
        ("0 0 13 * FRI", "UTC", utc(2024, 1, 5), True),  # a Friday, not the 13th
        ("0 0 13 * FRI", "UTC", utc(2024, 1, 6), False),  # neither
        ("0 0 */10 * FRI", "UTC", utc(2024, 1, 11), True),  # a step is a restriction too: 11th, a Thursday
        ("0 0 13 * *", "UTC", utc(2024, 1, 5), False),  # only day-of-month restricted
        ("0 0 * * FRI", "UTC", utc(2024, 1, 13), False),  # only day-of-week restricted
        # steps, ranges, lists
        ("*/15 * * * *", "UTC", utc(2024, 1, 1, 10, 45), True),
        ("*/15 * * * *", "UTC", utc(2024, 1, 1, 10, 0), True),
        ("*/15 * * * *", "UTC", utc(2024, 1, 1, 10, 10), False),
        ("10-50/20 * * * *", "UTC", utc(2024, 1, 1, 10, 10), True),
        ("10-50/20 * * * *", "UTC", utc(2024, 1, 1, 10, 30), True),
        ("10-50/20 * * * *", "UTC", utc(2024, 1, 1, 10, 50), True),
        ("10-50/20 * * * *", "UTC", utc(2024, 1, 1, 10, 20), False),
        ("10-50/20 * * * *", "UTC", utc(2024, 1, 1, 10, 0), False),
        ("5,17,41 * * * *", "UTC", utc(2024, 1, 1, 3, 17), True),
        ("5,17,41 * * * *", "UTC", utc(2024, 1, 1, 3, 18), False),
        ("0 22-2 * * *", "UTC", utc(2024, 1, 1, 1, 0), True),  # ranges wrap around midnight
        ("0 22-2 * * *", "UTC", utc(2024, 1, 1, 3, 0), False),
        # month and weekday names, any case
        ("0 0 1 JAN-MAR *", "UTC", utc(2024, 2, 1), True),
        ("0 0 1 JAN-MAR *", "UTC", utc(2024, 4, 1), False),
        ("0 0 1 jan,jul *", "UTC", utc(2024, 7, 1), True),
        ("0 9 * * MON-FRI", "UTC", utc(2024, 1, 5, 9), True),  # Friday
        ("0 9 * * MON-FRI", "UTC", utc(2024, 1, 6, 9), False),  # Saturday
        ("0 9 * * mon-fri", "UTC", utc(2024, 1, 1, 9), True),
        # Sunday is sun, 0 and 7
        ("0 0 * * sun", "UTC", utc(2024, 1, 7), True),
        ("0 0 * * 7", "UTC", utc(2024, 1, 7), True),
        ("0 0 * * 0", "UTC", utc(2024, 1, 7), True),
        ("0 0 * * 7", "UTC", utc(2024, 1, 8), False),
        ("0 0 * * 5-7", "UTC", utc(2024, 1, 7), True),
        # month ends, February 29th
        ("0 0 31 * *", "UTC", utc(2024, 1, 31), True),
        ("0 0 31 * *", "UTC", utc(2024, 4, 30), False),
        ("0 0 L * *", "UTC", utc(2024, 4, 30), True),
        ("0 0 L * *", "UTC", utc(2024, 4, 29), False),
        ("0 0 L * *", "UTC", utc(2024, 2, 29), True),
        ("0 0 L * *", "UTC", utc(2023, 2, 28), True),
        ("0 0 L * *", "UTC", utc(2024, 2, 28), False),
        ("0 0 29 2 *", "UTC", utc(2024, 2, 29), True),
        # time zones: 09:00 in New York is 14:00 UTC in winter (EST) and 13:00 UTC in summer (EDT)
        ("0 9 * * *", "America/New_York", utc(2024, 1, 15, 14), True),
        ("0 9 * * *", "America/New_York", utc(2024, 1, 15, 13), False),
        ("0 9 * * *", "America/New_York", utc(2024, 7, 15, 13), True),
        ("0 9 * * *", "America/New_York", utc(2024, 7, 15, 14), False),
        ("0 9 * * *", None, utc(2024, 7, 15, 9), True),  # no timezone: UTC
        ("0 9 * * *", "", utc(2024, 7, 15, 9), True),
        ("0 0 * * MON", "Asia/Tokyo", utc(2024, 1, 7, 15), True),  # Monday 00:00 in Tokyo is Sunday 15:00 UTC
    ],
)
def test_cron_matches_the_utc_minute(cron: str, tz: str | None, minute: datetime, fires: bool) -> None:
    assert matches(cron, tz, minute) is fires
    assert matches(cron, tz, minute + timedelta(seconds=59)) is fires  # any moment in the minute


def test_the_13th_or_friday_over_a_month_fires_on_both() -> None:
    days = [m.day for m in due_minutes("0 0 13 * FRI", "UTC", utc(2024, 8, 31), utc(2024, 9, 30))]
    assert days == [6, 13, 20, 27]  # Fridays in September 2024; the 13th is itself a Friday
    days = [m.day for m in due_minutes("0 0 13 * FRI", "UTC", utc(2024, 11, 30), utc(2024, 12, 31))]
    assert days == [6, 13, 20, 27]  # the 13th (a Friday) once, not twice
    days = [m.day for m in due_minutes("0 0 13 * FRI", "UTC", utc(2024, 4, 30), utc(2024, 5, 31))]
    assert days == [3, 10, 13, 17, 24, 31]  # Monday the 13th too


def test_day_31_skips_thirty_day_months_and_february() -> None:
    months = [m.month for m in due_minutes("0 0 31 * *", "UTC", utc(2023, 12, 31, 23), utc(2024, 12, 31, 23))]
    assert months == [1, 3, 5, 7, 8, 10, 12]


def test_february_29th_fires_only_in_leap_years() -> None:
    years = [m.year for m in due_minutes("0 12 29 2 *", "UTC", utc(2023, 1, 1), utc(2029, 1, 1))]
    assert years == [2024, 2028]


def test_every_minute_lists_each_minute_of_the_window_excluding_its_start() -> None:
    assert hm(due_minutes("* * * * *", "UTC", utc(2024, 1, 1, 0, 0, 30), utc(2024, 1, 1, 0, 3, 10))) == [
        "01-01 00:01",
        "01-01 00:02",
        "01-01 00:03",
    ]
    assert due_minutes("* * * * *", "UTC", utc(2024, 1, 1, 0, 5), utc(2024, 1, 1, 0, 5)) == []
    assert due_minutes("* * * * *", "UTC", utc(2024, 1, 1, 0, 5), utc(2024, 1, 1, 0, 1)) == []


@pytest.mark.parametrize(
    "cron", ["*/7 * * * *", "0 0 13 * FRI", "15 3,15 * JAN-MAR MON-FRI", "0 0 L * *", "0 0 31 * *"]
)
def test_in_utc_due_minutes_are_croniters_iteration(cron: str) -> None:
    it = croniter(cron, datetime(2024, 1, 1), ret_type=datetime)
    expected = []
    while (nxt := it.get_next(datetime)) <= datetime(2024, 2, 1):
        expected.append(nxt.replace(tzinfo=UTC))
    assert due_minutes(cron, "UTC", utc(2024, 1, 1), utc(2024, 2, 1)) == expected


# -- DST ---------------------------------------------------------------------------------------------
# Europe/Berlin: 2024-03-31 02:00 CET -> 03:00 CEST (01:00 UTC); 2024-10-27 03:00 CEST -> 02:00 CET (01:00 UTC)

SPRING = (utc(2024, 3, 30, 23), utc(2024, 3, 31, 22))  # the local day of 31 March (23 hours), in UTC
AUTUMN = (utc(2024, 10, 26, 22), utc(2024, 10, 27, 23))  # the local day of 27 October (25 hours)


@pytest.mark.parametrize(
    ("cron", "day", "expected"),
    [
        # a fixed time in the skipped hour fires once, at the first minute after the jump (03:00 CEST)
        ("30 2 * * *", SPRING, ["03-31 01:00"]),
        ("0 2 * * *", SPRING, ["03-31 01:00"]),
        ("0,30 2 * * *", SPRING, ["03-31 01:00"]),
        ("0 3 * * *", SPRING, ["03-31 01:00"]),  # 03:00 exists and fires as usual
        ("59 1 * * *", SPRING, ["03-31 00:59"]),  # 01:59 CET, just before the jump
        # wall-clock schedules (minute or hour starts with *) skip what does not exist
        ("30 * * * *", SPRING, ["03-30 23:30", "03-31 00:30"] + [f"03-31 {h:02}:30" for h in range(1, 22)]),
        ("*/20 2 * * *", SPRING, []),
        # a fixed time in the repeated hour fires once, on the first occurrence (02:30 CEST = 00:30 UTC)
        ("30 2 * * *", AUTUMN, ["10-27 00:30"]),
        ("0 2 * * *", AUTUMN, ["10-27 00:00"]),
        ("0 3 * * *", AUTUMN, ["10-27 02:00"]),
        # wall-clock schedules fire in both occurrences
        ("*/20 2 * * *", AUTUMN, [f"10-27 {h:02}:{m:02}" for h in (0, 1) for m in (0, 20, 40)]),
        ("30 * * * *", AUTUMN, [f"10-26 {h}:30" for h in (22, 23)] + [f"10-27 {h:02}:30" for h in range(23)]),
    ],
)
def test_berlin_dst_changes(cron: str, day: tuple[datetime, datetime], expected: list[str]) -> None:
    assert hm(due_minutes(cron, "Europe/Berlin", *day)) == expected


def test_every_15_minutes_keeps_real_time_spacing_through_both_changes() -> None:
    for start, end in (SPRING, AUTUMN):
        fired = due_minutes("*/15 * * * *", "Europe/Berlin", start, end)
        gaps = {b - a for a, b in itertools.pairwise(fired)}
        assert gaps == {timedelta(minutes=15)}
    assert len(due_minutes("*/15 * * * *", "Europe/Berlin", *SPRING)) == 23 * 4
    assert len(due_minutes("*/15 * * * *", "Europe/Berlin", *AUTUMN)) == 25 * 4


def test_new_york_spring_forward_runs_the_skipped_job_at_three() -> None:
    ny = "America/New_York"
    # 2024-03-10 02:00 EST -> 03:00 EDT (07:00 UTC)
    assert hm(due_minutes("30 2 * * *", ny, utc(2024, 3, 10, 5), utc(2024, 3, 11, 5))) == ["03-10 07:00"]
    # 2024-11-03 02:00 EDT -> 01:00 EST (06:00 UTC): 01:30 happens twice, fires on the first (05:30 UTC)
    assert hm(due_minutes("30 1 * * *", ny, utc(2024, 11, 3, 4), utc(2024, 11, 4, 5))) == ["11-03 05:30"]


@pytest.mark.parametrize(
    "cron", ["30 2 * * *", "0,30 2 * * *", "*/20 2 * * *", "30 * * * *", "*/7 * * * *", "0 3 * * *"]
)
@pytest.mark.parametrize("day", [SPRING, AUTUMN], ids=["spring", "autumn"])
def test_minute_by_minute_ticks_fire_the_same_minutes_as_one_window(cron: str, day: tuple[datetime, datetime]) -> None:
    """The scheduler asks minute by minute; across a DST change that must agree with the whole-day answer."""
    whole = due_minutes(cron, "Europe/Berlin", *day)
    step, minute = [], day[0]
    while minute < day[1]:
        step += due_minutes(cron, "Europe/Berlin", minute, minute + MIN)
        minute += MIN
    by_match = [
        m
        for m in (day[0] + MIN * i for i in range(1, int((day[1] - day[0]) / MIN) + 1))
        if matches(cron, "Europe/Berlin", m)
    ]
    assert step == whole == by_match


# -- validation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cron", "tz", "problem"),
    [
        ("60 * * * *", "UTC", "minute field '60' is not valid (out of range)"),
        ("* 24 * * *", "UTC", "hour field '24' is not valid"),
        ("* * 0 * *", "UTC", "day-of-month field '0' is not valid"),
        ("* * 32 * *", "UTC", "day-of-month field '32'"),
        ("* * * 13 *", "UTC", "month field '13'"),
        ("* * * foo *", "UTC", "month field 'foo' is not valid"),
        ("* * * * 8", "UTC", "day-of-week field '8'"),
        ("* * * * funday", "UTC", "day-of-week field 'funday'"),
        ("*/0 * * * *", "UTC", "minute field '*/0' is not valid (step '0' is not acceptable)"),
        ("1,,2 * * * *", "UTC", "minute field '1,,2'"),
        ("H * * * *", "UTC", "minute field 'H': H (hashed) values are not supported"),
        ("R 0 * * *", "UTC", "minute field 'R': R (random) values are not supported"),
        ("* * * *", "UTC", "has 4 field(s); it needs 5"),
        ("0 * * * * *", "UTC", "has 6 field(s)"),
        ("@daily", "UTC", "macros like @daily are not supported"),
        ("", "UTC", "cron must be a string of 5 fields"),
        (None, "UTC", "cron must be a string of 5 fields"),
        ("0 0 30 2 *", "UTC", "never fires: no month '2' has a day-of-month '30'"),
        ("0 0 31 4,6 *", "UTC", "never fires"),
        ("* * * * *", "Mars/Olympus", "timezone 'Mars/Olympus' is not a known IANA time zone"),
        ("* * * * *", "../etc/passwd", "is not a known IANA time zone"),
        ("* * * * *", 5, "timezone must be a string"),
    ],
)
def test_invalid_schedules_name_the_problem(cron: object, tz: object, problem: str) -> None:
    problems = validate(cron, tz)
    assert any(problem in p for p in problems), problems
    with pytest.raises(InvalidSchedule) as info:
        parse(cron, tz)
    assert info.value.problems == problems


def test_every_problem_is_listed_at_once() -> None:
    problems = validate("61 25 * * *", "Nowhere/Special")
    assert [p.split(" ", 1)[0] for p in problems] == ["minute", "hour", "timezone"]


@pytest.mark.parametrize(
    "cron",
    ["* * * * *", "*/5 9-17 * * MON-FRI", "0 0 L * *", "0 0 * * FRI#2", "0 0 15W * *", "0 0 ? * *", "  0  0 * * *  "],
)
def test_valid_schedules_have_no_problems(cron: str) -> None:
    assert validate(cron, "Europe/Berlin") == []
    assert parse(cron, "Europe/Berlin").timezone == "Europe/Berlin"


def test_times_without_a_zone_are_refused() -> None:
    with pytest.raises(ValueError, match="no time zone"):
        matches("* * * * *", "UTC", datetime(2024, 1, 1))
