"""Cron schedules: validate a 5-field expression and list the UTC minutes it fires at (pure, no I/O).

Field syntax is croniter's (``*``, ``*/n``, ``a-b``, ``a-b/n``, lists, month and
weekday names in any case, ``0`` and ``7`` both Sunday), with two rules of note:

- Vixie's day rule: when day-of-month **and** day-of-week are both restricted
  (neither is ``*``), a day matching either fires: ``0 0 13 * FRI`` runs on every
  13th and on every Friday. A step such as ``*/10`` counts as restricted.
- croniter's extensions are accepted too: ``L`` (last day of the month),
  ``nW`` (nearest weekday), ``FRI#2`` (second Friday), ``?`` (same as ``*``) and
  ranges that wrap around (``0 22-2 * * *`` is 22:00 to 02:00). Hashed ``H`` and
  random ``R`` values are rejected: each runner would pick its own value.
  ``@daily``-style macros and 6- or 7-field expressions are rejected.

Times are matched on the wall clock of the schedule's IANA ``timezone`` (UTC by
default). Daylight-saving changes follow Vixie cron, which tells *fixed-time*
schedules (minute and hour fields both without a leading ``*``, e.g.
``30 2 * * *``) from *wall-clock* ones (``*/15 * * * *``, ``0 * * * *``):

- Clocks go forward (Europe/Berlin, last Sunday of March, 02:00 → 03:00): local
  02:00-02:59 does not exist. A fixed-time schedule due in the skipped hour
  fires once, at the first minute after the jump (03:00 local): ``30 2 * * *``
  fires at 01:00 UTC that day, so a daily job is late, never lost. Wall-clock
  schedules skip the minutes that do not exist.
- Clocks go back (last Sunday of October, 03:00 → 02:00): local 02:00-02:59
  happens twice. A fixed-time schedule fires once, on the first occurrence
  (``30 2 * * *`` fires at 00:30 UTC, not again at 01:30 UTC). Wall-clock
  schedules fire in both occurrences, so ``*/15 * * * *`` keeps firing every
  15 real minutes.

This differs from croniter's own iteration only at fall-back, where croniter
fires fixed-time schedules twice.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, CroniterError, croniter

MINUTE = timedelta(minutes=1)
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
ALLOWED = (
    "0-59",
    "0-23",
    "1-31 or L",
    "1-12 or JAN-DEC",
    "0-7 or SUN-SAT (0 and 7 are Sunday)",
)
_PER_RUNNER = re.compile(r"(?:^|[,/-])([HR])(?:$|[,/(-])", re.IGNORECASE)
_SEGMENT = timedelta(days=1)
"""Offset changes are looked for in spans of at most a day: no zone changes its offset twice a day."""


class InvalidSchedule(ValueError):
    """A cron expression or time zone the scheduler cannot use; ``problems`` names each field at fault."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _field_problem(index: int, value: str) -> str | None:
    name = FIELDS[index]
    per_runner = _PER_RUNNER.search(value)
    if per_runner:
        kind = "hashed" if per_runner.group(1).upper() == "H" else "random"
        return f"{name} field {value!r}: {per_runner.group(1)} ({kind}) values are not supported"
    probe = ["*"] * 5
    probe[index] = value
    try:
        croniter(" ".join(probe))
    except CroniterError as exc:
        detail = re.sub(r"^\[[^\]]*\]\s*| in field \d+", "", str(exc)).removeprefix("is not acceptable, ")
        detail = "" if detail == "is not acceptable" else f" ({detail})"
        return (
            f"{name} field {value!r} is not valid{detail}; use {ALLOWED[index]}, '*', lists (1,5), "
            "ranges (a-b) and steps (*/n, a-b/n)"
        )
    return None


def _cron_problems(cron: object) -> list[str]:
    if not isinstance(cron, str) or not cron.strip():
        return ["cron must be a string of 5 fields, like '*/5 * * * *'"]
    fields = cron.split()
    if len(fields) != 5:
        hint = "; macros like @daily are not supported, write '0 0 * * *'" if cron.strip().startswith("@") else ""
        return [
            f"cron {cron!r} has {len(fields)} field(s); it needs 5: minute hour day-of-month month day-of-week{hint}"
        ]
    problems = [p for i, v in enumerate(fields) if (p := _field_problem(i, v)) is not None]
    if problems:
        return problems
    try:
        croniter(cron, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        return [f"cron {cron!r} never fires: no month {fields[3]!r} has a day-of-month {fields[2]!r}"]
    except CroniterError as exc:
        return [f"cron {cron!r} is not valid: {exc}"]
    return []


def _zone(timezone: object) -> ZoneInfo | str:
    """The zone, or the problem with the name. None and "" mean UTC."""
    if timezone is None or timezone == "":
        return ZoneInfo("UTC")
    if not isinstance(timezone, str):
        return "timezone must be a string, an IANA name like 'Europe/Berlin'"
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"timezone {timezone!r} is not a known IANA time zone (e.g. 'UTC', 'Europe/Berlin', 'America/New_York')"


def validate(cron: object, timezone: object = "UTC") -> list[str]:
    """Every problem with a schedule's config, human-readable and naming the field; empty when it is usable."""
    problems = _cron_problems(cron)
    zone = _zone(timezone)
    if isinstance(zone, str):
        problems.append(zone)
    return problems


def as_utc(t: datetime) -> datetime:
    if t.tzinfo is None:
        raise ValueError(f"{t.isoformat()} has no time zone; pass an aware datetime (UTC)")
    return t.astimezone(UTC)


def floor_minute(t: datetime) -> datetime:
    """The start of the UTC minute holding ``t``."""
    return as_utc(t).replace(second=0, microsecond=0)


@dataclass(frozen=True)
class CronSchedule:
    """A validated cron expression in a time zone; build with :func:`parse`."""

    cron: str
    timezone: str
    zone: ZoneInfo
    wall_clock: bool
    """Minute or hour field starts with ``*``: follows the wall clock through DST changes (see module doc)."""
    _template: croniter

    def matches(self, minute_utc: datetime) -> bool:
        """Whether the schedule fires at the UTC minute holding ``minute_utc``."""
        minute = floor_minute(minute_utc)
        return bool(self.due_minutes(minute - MINUTE, minute))

    def due_minutes(self, after_utc: datetime, until_utc: datetime) -> list[datetime]:
        """The UTC minutes ``m`` with ``after < m <= until`` (both floored to the minute) it fires at, ascending."""
        start, end = floor_minute(after_utc), floor_minute(until_utc)
        found: set[datetime] = set()
        for lo, hi, offset in self._spans(start, end):
            before = self._offset(lo)
            jumped = before < offset and not self.wall_clock
            if jumped and next(self._local_fires(lo + before, lo + offset), None) is not None:
                found.add(lo + MINUTE)  # the jump skipped a due local time: fire at the first minute after it
            for local in self._local_fires(lo + offset, hi + offset):
                minute = local - offset
                if self.wall_clock or minute.astimezone(self.zone).fold == 0:
                    found.add(minute)
        return sorted(found)

    # -- time-zone arithmetic ------------------------------------------------------------------

    def _offset(self, minute: datetime) -> timedelta:
        return minute.astimezone(self.zone).utcoffset() or timedelta(0)

    def _spans(self, start: datetime, end: datetime) -> Iterator[tuple[datetime, datetime, timedelta]]:
        """(lo, hi, offset): the minutes in (lo, hi] share one UTC offset; together they cover (start, end]."""
        lo = start
        while lo < end:
            hi = min(end, lo + _SEGMENT)
            offset = self._offset(lo + MINUTE)
            if self._offset(hi) != offset:
                first, last = lo + MINUTE, hi  # offset(first) is the old one, offset(last) the new one
                while last - first > MINUTE:
                    mid = first + (last - first) // 2 // MINUTE * MINUTE
                    first, last = (mid, last) if self._offset(mid) == offset else (first, mid)
                hi = first
            yield lo, hi, offset
            lo = hi

    def _local_fires(self, after: datetime, until: datetime) -> Iterator[datetime]:
        """Wall-clock times (naive, as UTC-tagged datetimes) in (after, until] that the fields match."""
        it = copy.copy(self._template)
        it.set_current(after.replace(tzinfo=None), force=True)
        while True:
            try:
                local: datetime = it.get_next(datetime)
            except CroniterBadDateError:
                return
            local = local.replace(tzinfo=UTC)
            if local > until:
                return
            yield local


@functools.lru_cache(maxsize=2048)
def _parse(cron: str, timezone: str) -> CronSchedule | InvalidSchedule:
    problems = validate(cron, timezone)
    if problems:
        return InvalidSchedule(problems)
    zone = _zone(timezone)
    assert isinstance(zone, ZoneInfo)
    fields = cron.split()
    template = croniter(" ".join(fields), datetime(2000, 1, 1), ret_type=datetime, day_or=True)
    return CronSchedule(
        " ".join(fields), zone.key, zone, fields[0].startswith("*") or fields[1].startswith("*"), template
    )


def parse(cron: object, timezone: object = "UTC") -> CronSchedule:
    """The schedule, or InvalidSchedule listing every problem. Parsed schedules are cached."""
    if not isinstance(cron, str) or not (timezone is None or isinstance(timezone, str)):
        raise InvalidSchedule(validate(cron, timezone))
    result = _parse(cron, timezone or "UTC")
    if isinstance(result, InvalidSchedule):
        raise InvalidSchedule(result.problems)
    return result


def matches(cron: str, timezone: str | None, minute_utc: datetime) -> bool:
    """Whether ``cron`` in ``timezone`` fires at the UTC minute holding ``minute_utc``; raises InvalidSchedule."""
    return parse(cron, timezone).matches(minute_utc)


def due_minutes(cron: str, timezone: str | None, after_utc: datetime, until_utc: datetime) -> list[datetime]:
    """UTC minutes in (after, until] at which ``cron`` in ``timezone`` fires, ascending; raises InvalidSchedule."""
    return parse(cron, timezone).due_minutes(after_utc, until_utc)
