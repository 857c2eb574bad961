"""A field's value made comparable: cleaned, parsed, and in the forms a kind compares.

Every value is first cleaned (:func:`clean`): Unicode compatibility forms
folded, invisible format characters (zero-width spaces and joiners) and
control characters removed, accents folded, look-alike Cyrillic and Greek
letters read as the Latin ones, case folded and white space collapsed.

Then each kind of field (``kinds.py``) makes of it the form two values must
share to be the same value (a ``*_form``: digits only for a phone, letters
and digits for a code, ``YYYY-MM-DD`` for a date, its day and month in order
when the format leaves them ambiguous, the number's shortest exact form for
a number, and for names and text their words as the default mode repairs a
record's text: ``Third St.`` and ``3rd Street`` are one form), and the form
records sharing a blocking key must share (a ``*_key``: a date without its
time, a phone's last digits, an email's mailbox, a name's first letters).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..text.repair import repair

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


def phone_form(cleaned: str) -> str:
    """Digits only; an international call's 00 is the + it stands for."""
    digits = _NOT_DIGIT.sub("", cleaned)
    return digits[2:] if digits.startswith("00") else digits


def code_form(cleaned: str) -> str:
    """Letters and digits only: ``ACCO-0000000050`` is ``acco0000000050``."""
    return _NOT_ALNUM.sub("", cleaned)


def email_form(cleaned: str) -> str:
    return cleaned.replace(" ", "")


def date_form(cleaned: str) -> str:
    """``YYYY-MM-DD`` and the time of day (:attr:`Day.normal`); letters and
    digits of what is no date."""
    day = parse_date(cleaned)
    return _NOT_ALNUM.sub("", cleaned) if day is None else day.normal


def number_form(cleaned: str) -> str:
    """The number's shortest exact form; what is no number as it is."""
    number = parse_number(cleaned)
    return cleaned if number is None else repr(number)


def words_form(cleaned: str) -> str:
    """The words as the text of records is repaired (``repair.py``: street
    suffixes, ordinals and number words, "&"): "3rd St." is "Third Street"."""
    return " ".join(words_of(repair(cleaned)))


def is_email(cleaned: str) -> bool:
    return _EMAIL.match(cleaned) is not None


def is_phone(cleaned: str) -> bool:
    digits = len(_NOT_DIGIT.sub("", cleaned))
    return 7 <= digits <= 16 and _PHONE.match(cleaned.replace("ext", "x")) is not None


# Given names whose table entries are kept at hand.
NORMAL_NAMES = 1 << 14
# A code written in parts (a postcode: ``tq13 8df``, ``k1a 0b1``) is short,
# and each part holds a digit.
CODE_PARTS = 2
CODE_LENGTH = 12


def is_code(cleaned: str) -> bool:
    """One token holding a digit (``SKU-001``), or a short code of a few
    parts, each holding one (a postcode)."""
    parts = cleaned.split(" ")
    if len(parts) == 1:
        return _DIGIT.search(cleaned) is not None
    return (len(parts) <= CODE_PARTS and len(cleaned) <= CODE_LENGTH
            and all(_DIGIT.search(part) is not None for part in parts))


# A name's key: its first letters (typos are rarer at the start of a word).
PREFIX = 4
# The last digits of a phone number that say whose it is, whatever the
# country or area code written before them.
PHONE_TAIL = 7


@lru_cache(maxsize=1)
def _namer():
    # The nicknames package's hand-curated table of given names and their
    # nicknames and diminutives (william: bill, will, billy; margaret: peggy).
    from nicknames import NickNamer

    return NickNamer()


@lru_cache(maxsize=NORMAL_NAMES)
def name_groups(word: str) -> frozenset[str]:
    """The given names ``word`` is one of (itself, where it has nicknames)
    or a nickname or diminutive of, by a hand-curated table: two words
    sharing one are the same given name as people write it (``bill`` and
    ``william``; ``peggy`` and ``margaret``). Empty for a word the table
    does not know."""
    namer = _namer()
    found = set(namer.canonicals_of(word))
    if namer.nicknames_of(word):
        found.add(word)
    return frozenset(found)


def is_given_name(cleaned: str) -> bool:
    """Whether the value's first word is a given name the nicknames table knows."""
    words = words_of(cleaned)
    return bool(words) and bool(name_groups(words[0]) or _namer().nicknames_of(words[0]))


def day_key(form: str, words: int = 1) -> str:
    """A date's day without its time, day and month in order (so a swap still meets)."""
    day = form.split(" ", 1)[0].rstrip("?")
    parts = day.split("-")
    return f"{parts[0]}-{'-'.join(sorted(parts[1:]))}" if len(parts) == 3 else day


def phone_key(form: str, words: int = 1) -> str:
    """A phone number's last :data:`PHONE_TAIL` digits."""
    return form[-PHONE_TAIL:]


def mailbox_key(form: str, words: int = 1) -> str:
    """An email's mailbox, whatever its domain."""
    return form.split("@", 1)[0]


def prefix_key(form: str, words: int = 1) -> str:
    """The first :data:`PREFIX` letters of a name's first ``words`` words."""
    return " ".join(word[:PREFIX] for word in words_of(form)[:words])


def whole_key(form: str, words: int = 1) -> str:
    return form
