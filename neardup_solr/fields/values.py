"""A record's fields: what each holds (its kind), and its value made comparable.

A record read from a table keeps its columns as fields (``Record.fields``:
name, value), and the match model compares them one by one
(``comparisons.py``) instead of as one bag of words. What a field holds is
not configured: it is read off a sample of the data (:func:`profile`), as
one of :data:`KINDS`:

- ``email``, ``phone``, ``date``, ``number``: values that parse as such
  (most of them);
- ``category``: few distinct values (a status, a country code);
- ``code``: single tokens holding digits (identifiers, SKUs, postcodes);
- ``name``: a few words (a person's or a company's name, a city);
- ``text``: longer text (an address, a title, a description).

Every value is first cleaned (:func:`clean`): Unicode compatibility forms
folded, invisible format characters (zero-width spaces and joiners) and
control characters removed, accents folded, look-alike Cyrillic and Greek
letters read as the Latin ones, case folded and white space collapsed.
Then :func:`normal` makes the form two values must share to be the same
value (the exact level of a comparison, the value whose frequency in the
index weighs an agreement, the blocking keys): digits only for a phone,
letters and digits for a code, ``YYYY-MM-DD`` for a date (its day and month
in order when the format leaves them ambiguous), the number's shortest
exact form for a number, and for names and text their words as the
default mode repairs a record's text (``repair.py``: ``Third St.`` and
``3rd Street`` are one form).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from ..text.repair import repair

KINDS = ("name", "text", "code", "email", "phone", "date", "number", "category")

# Look-alike letters of other scripts, read as the Latin letter they are
# drawn like (Unicode's confusables for Cyrillic and Greek): a name typed
# with one of them is the same name.
_CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ѕ": "s", "і": "i", "ј": "j", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ɡ": "g", "ӏ": "l",
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w",
})
_SPACES = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_NOT_DIGIT = re.compile(r"[^0-9]+")
_WORD = re.compile(r"[^\W_]+")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE = re.compile(r"^[0-9+()\-. /x]+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_DIGIT = re.compile(r"\d")
_TIME = re.compile(r"[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:\s*(?:z|[+-]\d{2}:?\d{2}))?$")
_YMD = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$")
_DMY = re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_MONTHS = {name: number for number, names in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")), start=1) for name in names}
_NORMAL_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(\?)?(?: (\d{2}:\d{2}:\d{2}))?$")
_NAMED = re.compile(r"^(?:(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})|([a-z]+)\.?\s+(\d{1,2}),?\s+(\d{4}))$")

# A kind is read off the values when this share of a field's sampled values
# has it: most, so a few typed-in exceptions do not change what a field is.
KIND_SHARE = 0.8
# A field of at most this many distinct values in the sample, each seen
# ``REPEATS`` times on average, or under this share of them distinct, is a
# category.
CATEGORY_VALUES = 30
REPEATS = 3
CATEGORY_SHARE = 0.02
# Names are short: a field averaging more words than this is text.
NAME_WORDS = 4


def clean(value: str) -> str:
    """``value`` as comparable text: compatibility forms folded (NFKC),
    format and control characters removed, accents folded, look-alike
    letters read as Latin ones, case folded, white space collapsed.

    >>> clean("  Ren\\u200bée  D\\u0455ouza ")
    'renee dsouza'
    """
    text = unicodedata.normalize("NFKC", value)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text)
                       if unicodedata.category(c) not in ("Cf", "Cc", "Mn", "Co"))
        text = text.casefold().translate(_CONFUSABLES)
    else:
        text = text.lower()
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class Day:
    """A date as read: year, month, day, the time of day when given
    (``HH:MM:SS``), and whether day and month could be either way round
    (``03/04/2020``)."""

    year: int
    month: int
    day: int
    time: str = ""
    either_way: bool = False

    @property
    def normal(self) -> str:
        """``YYYY-MM-DD`` and the time when there is one; a date whose day
        and month could be either way round has them in order and ``?``
        after them (``2020-03-04?``), so it is one form whichever it is."""
        first, second = (self.month, self.day) if not self.either_way else sorted((self.month, self.day))
        return (f"{self.year:04d}-{first:02d}-{second:02d}" + ("?" if self.either_way else "")
                + (f" {self.time}" if self.time else ""))

    @classmethod
    def of_normal(cls, form: str) -> Day | None:
        """The date a :attr:`normal` form holds (``None`` for another form)."""
        found = _NORMAL_DATE.match(form)
        if found is None:
            return None
        year, month, day, either, time = found.groups()
        return cls(int(year), int(month), int(day), time or "", bool(either))


def parse_date(value: str) -> Day | None:
    """The date ``value`` writes, or ``None``: ``YYYY-MM-DD`` (or with ``/``
    or ``.``, or ``YYYYMMDD``), ``DD-MM-YYYY`` or ``MM-DD-YYYY`` (told apart
    by a part over 12, else ``either_way``), ``5 Jan 2020``, ``Jan 5, 2020``;
    each maybe followed by a time of day. A day and a month that are out
    of range the other way round are taken swapped (``2024-14-02``)."""
    text = clean(value)
    time = ""
    if found := _TIME.search(text):
        time = f"{int(found.group(1)):02d}:{found.group(2)}:{found.group(3) or '00'}"
        text = text[:found.start()].strip()
    either_way = False
    if found := _YMD.match(text) or _COMPACT.match(text):
        year, month, day = (int(part) for part in found.groups())
    elif found := _DMY.match(text):
        first, second, year = (int(part) for part in found.groups())
        if first > 12:
            day, month = first, second
        elif second > 12:
            month, day = first, second
        else:
            # Neither order is told: day first, as most of the world writes it.
            day, month, either_way = first, second, first != second
    elif found := _NAMED.match(text):
        parts = found.groups()
        day, name, year = (parts[0], parts[1], parts[2]) if parts[0] else (parts[4], parts[3], parts[5])
        if name not in _MONTHS:
            return None
        day, month, year = int(day), _MONTHS[name], int(year)
    else:
        return None
    if month > 12 and day <= 12:
        month, day = day, month
    if not (1 <= month <= 12 and 1 <= day <= 31 and 1000 <= year <= 2999):
        return None
    return Day(year, month, day, time, either_way)


def parse_number(value: str) -> float | None:
    """The number ``value`` writes (``1,234.5`` and ``$ 12`` too), or ``None``."""
    text = clean(value).replace(",", "").lstrip("$€£¥ ").rstrip("%")
    if not _NUMBER.match(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def words_of(cleaned: str) -> list[str]:
    """The words of a cleaned value: runs of letters and digits."""
    return _WORD.findall(cleaned)


# Normal forms remembered: most fields repeat their values (a city, a status,
# a first name), and repairing one costs tens of microseconds.
NORMAL_CACHE = 1 << 16


@lru_cache(maxsize=NORMAL_CACHE)
def normal(kind: str, value: str) -> str:
    """The form of ``value`` that another value of a field of ``kind`` must
    share to be the same value; "" when nothing of it is left (a missing
    value).

    >>> normal("phone", "+1 (524) 555-0129")
    '15245550129'
    >>> normal("date", "24/05/2023 16:00")
    '2023-05-24 16:00:00'
    """
    cleaned = clean(value)
    if kind == "phone":
        # Digits only; an international call's 00 is the + it stands for.
        digits = _NOT_DIGIT.sub("", cleaned)
        return digits[2:] if digits.startswith("00") else digits
    if kind == "code":
        return _NOT_ALNUM.sub("", cleaned)
    if kind == "email":
        return cleaned.replace(" ", "")
    if kind == "date":
        day = parse_date(cleaned)
        if day is None:
            return _NOT_ALNUM.sub("", cleaned)
        return day.normal
    if kind == "number":
        number = parse_number(cleaned)
        return cleaned if number is None else repr(number)
    # Names and text as the text of records is repaired (``repair.py``:
    # street suffixes, ordinals and number words, "&"): "3rd St." is "Third Street".
    return " ".join(words_of(repair(cleaned)))


def _is_email(cleaned: str) -> bool:
    return _EMAIL.match(cleaned) is not None


def _is_phone(cleaned: str) -> bool:
    digits = len(_NOT_DIGIT.sub("", cleaned))
    return 7 <= digits <= 16 and _PHONE.match(cleaned.replace("ext", "x")) is not None


def _is_code(cleaned: str) -> bool:
    return " " not in cleaned and _DIGIT.search(cleaned) is not None


@dataclass(frozen=True)
class FieldProfile:
    """What a field holds, read off a sample: its ``kind`` (one of
    :data:`KINDS`), the share of records that fill it, the share of its
    filled values that are distinct, and its values' words on average."""

    name: str
    kind: str
    filled: float = 1.0
    distinct: float = 1.0
    words: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> FieldProfile:
        return cls(name=str(data["name"]), kind=str(data["kind"]), filled=float(data.get("filled", 1.0)),
                   distinct=float(data.get("distinct", 1.0)), words=float(data.get("words", 1.0)))


def kind_of(values: Sequence[str]) -> str:
    """The kind of a field whose (filled) values are ``values``."""
    cleaned = [clean(v) for v in values]
    cleaned = [c for c in cleaned if c]
    if not cleaned:
        return "text"

    def share(test) -> float:
        return sum(1 for c in cleaned if test(c)) / len(cleaned)

    distinct = len(set(cleaned))
    if share(_is_email) >= KIND_SHARE:
        return "email"
    if share(lambda c: parse_date(c) is not None) >= KIND_SHARE:
        return "date"
    if distinct < CATEGORY_SHARE * len(cleaned) or (distinct <= CATEGORY_VALUES and distinct * REPEATS <= len(cleaned)):
        return "category"
    if share(lambda c: parse_number(c) is not None) >= KIND_SHARE:
        return "number"
    if share(_is_phone) >= KIND_SHARE:
        return "phone"
    if share(_is_code) >= KIND_SHARE:
        return "code"
    words = sum(len(words_of(c)) for c in cleaned) / len(cleaned)
    return "name" if words <= NAME_WORDS else "text"


def profile(names: Sequence[str], rows: Iterable[Mapping[str, str]]) -> tuple[FieldProfile, ...]:
    """Each of the fields ``names`` profiled from sampled records' fields ``rows``.

    Costs a cleaning of every sampled value (2000 records of 15 fields:
    about a quarter of a second).
    """
    rows = list(rows)
    found = []
    for name in names:
        values = [row[name] for row in rows if row.get(name, "").strip()]
        kind = kind_of(values)
        normals = [normal(kind, v) for v in values]
        normals = [v for v in normals if v]
        found.append(FieldProfile(
            name=name, kind=kind, filled=round(len(normals) / len(rows), 4) if rows else 0.0,
            distinct=round(len(set(normals)) / len(normals), 4) if normals else 0.0,
            words=round(sum(len(v.split()) for v in normals) / len(normals), 2) if normals else 0.0))
    return tuple(found)
