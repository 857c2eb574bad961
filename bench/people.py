"""Synthetic person records with known duplicates, for measuring detection quality.

``python -m bench.people --n 10000 --seed 1 --out-dir bench/data/people``
writes ``records.txt`` (``ID TEXT``, ids 1..N in file order) and
``true_pairs.tsv`` (every pair of records of one person, smaller id first),
as ``bench.generate`` does for businesses.

A record is a person as a registry keeps them, one field after another:
``given surname street-number street-name suffix locality postcode state
date-of-birth id-number``, for example
``Maria Lopez 412 Cedar St Glendale 30412 GA 19840307 5120349``. The date of
birth is ``YYYYMMDD``; a locality's postcode is the same wherever it occurs.

A fifth of the records sit in clusters of two or three: a person entered
again, each entry made from the original by one to three corruptions, each
on a field of its own and each what typing, scanning or a paper form does to
a person's record:

- a typo in a name, the street or the locality (a letter swapped, dropped,
  doubled or replaced);
- an OCR confusion (``rn``/``m``, ``cl``/``d``, ``0``/``8``, ``5``/``S`` ...);
- given name and surname in the other order;
- an abbreviation: the given name cut to its initial, the street suffix
  abbreviated or spelled out;
- a field left out;
- the other form of a given name (``Robert``/``Bob``);
- two adjacent digits transposed in the date of birth, id number,
  postcode or street number.

At most three fields change, so the others still say who it is. Against
that, people who are not duplicates look alike too: one in twenty shares a
household with another (same surname and address; own given name, date of
birth and id number), and names recur by chance.

Records are made one at a time, each person from a random generator of its
own, so the same seed and size give the same bytes and a large file never
sits in memory.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from . import words as w
from .generate import SPELLINGS, Layout, _typo, command_line

# A person registered two or three times is the common case of duplication;
# a fifth of the records in such clusters makes the true pairs a large
# enough sample at 10,000 records.
CLUSTER_SHARE = 0.2
CLUSTER_SIZES = (2, 2, 3)
HOUSEHOLD_SHARE = 0.05
# One corruption most often, three rarely.
CORRUPTIONS = (1, 2, 3)
CORRUPTION_WEIGHTS = (50, 35, 15)
FIELDS = ("given", "surname", "number", "street", "suffix", "locality", "postcode", "state", "dob", "id")
OTHER_FORMS: dict[str, list[str]] = {}
for _formal, _short in w.NICKNAMES:
    OTHER_FORMS.setdefault(_formal, []).append(_short)
    OTHER_FORMS.setdefault(_short, []).append(_formal)
# What a character recogniser reads for what was printed, both ways round
# where the confusion goes both ways.
OCR = (("rn", "m"), ("m", "rn"), ("cl", "d"), ("d", "cl"), ("li", "h"), ("vv", "w"), ("w", "vv"), ("e", "c"),
       ("c", "e"), ("l", "i"), ("i", "l"), ("o", "0"), ("O", "0"), ("0", "8"), ("8", "0"), ("1", "7"), ("7", "1"),
       ("5", "6"), ("6", "5"), ("3", "8"), ("5", "S"), ("8", "B"), ("1", "l"), ("0", "O"))


@dataclass(frozen=True)
class Person:
    """One record's fields (None: left out) and whether the surname comes first."""

    given: str | None
    surname: str | None
    number: str | None
    street: str | None
    suffix: str | None
    locality: str | None
    postcode: str | None
    state: str | None
    dob: str | None
    id: str | None
    surname_first: bool = False

    def text(self) -> str:
        values = [getattr(self, f) for f in FIELDS]
        if self.surname_first:
            values[0], values[1] = values[1], values[0]
        return " ".join(v for v in values if v is not None)


def postcode(locality: str, state: str) -> str:
    """Five digits, the same for every record of one locality (CRC-32 is the same on every machine)."""
    return str(10000 + zlib.crc32(f"{locality} {state}".encode()) % 90000)


def _drawn(rng: random.Random) -> Person:
    full, short = rng.choice(w.SUFFIXES)
    locality, state = rng.choice(w.TOWNS), rng.choice(w.STATES)
    # Days up to 28 exist in every month; birth years of living adults and teenagers.
    dob = f"{rng.randint(1930, 2008)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    return Person(given=rng.choice(w.GIVEN), surname=rng.choice(w.SURNAMES), number=str(rng.randint(1, 9999)),
                  street=rng.choice(w.STREETS), suffix=rng.choice((full, short)), locality=locality,
                  postcode=postcode(locality, state), state=state, dob=dob,
                  id=str(rng.randint(1_000_000, 9_999_999)))  # seven-digit id numbers


class People(Layout):
    """Which person sits where, and each record's fields."""

    def __init__(self, n: int, seed: int):
        super().__init__(n, seed, CLUSTER_SHARE, CLUSTER_SIZES)

    def _rng(self, base: int) -> random.Random:
        return random.Random(f"{self.seed}:person:{base}")

    def person(self, base: int) -> Person:
        """Base record ``base``: its own draws, or a household member of an earlier person."""
        rng = self._rng(base)
        own = _drawn(rng)
        if base == 0 or rng.random() >= HOUSEHOLD_SHARE:
            return own
        home = _drawn(self._rng(rng.randrange(base)))
        given = rng.choice([g for g in w.GIVEN if g != home.given])
        return replace(home, given=given, dob=own.dob, id=own.id)

    def fields(self, logical: int) -> Person:
        base = self.original(logical)
        if base is None:
            return self.person(logical)
        rng = self.variant_rng(logical)
        person, touched = self.person(base), set()
        wanted = rng.choices(CORRUPTIONS, CORRUPTION_WEIGHTS)[0]
        while len(touched) < wanted:
            corrupt = rng.choice(CORRUPT)
            changed = corrupt(person, rng, touched)
            if changed is not None and changed[0] != person:  # a typo swapping two equal letters changes nothing
                person, field = changed
                touched.add(field)
        return person

    def text(self, logical: int) -> str:
        return self.fields(logical).text()


Change = tuple[Person, str] | None


def _free(person: Person, touched: set[str], names: tuple[str, ...]) -> list[str]:
    return [f for f in names if f not in touched and getattr(person, f) is not None]


def _set(person: Person, field: str, value: str | None) -> Change:
    return replace(person, **{field: value}), field


def _mistyped(person: Person, rng: random.Random, touched: set[str]) -> Change:
    fields = [f for f in _free(person, touched, ("given", "surname", "street", "locality"))
              if len(getattr(person, f)) >= 4 and getattr(person, f).isalpha()]
    if not fields:
        return None
    field = rng.choice(fields)
    return _set(person, field, _typo([getattr(person, field)], rng)[0])


def _misread(person: Person, rng: random.Random, touched: set[str]) -> Change:
    found = [(f, at, seen, read) for f in _free(person, touched, FIELDS) for seen, read in OCR
             for at in range(len(getattr(person, f))) if getattr(person, f).startswith(seen, at)]
    if not found:
        return None
    field, at, seen, read = rng.choice(found)
    value = getattr(person, field)
    return _set(person, field, value[:at] + read + value[at + len(seen) :])


def _names_swapped(person: Person, rng: random.Random, touched: set[str]) -> Change:
    if "order" in touched:
        return None
    return replace(person, surname_first=not person.surname_first), "order"


def _abbreviated(person: Person, rng: random.Random, touched: set[str]) -> Change:
    fields = [f for f in _free(person, touched, ("given", "suffix"))
              if (f == "given" and len(person.given) > 1) or (f == "suffix" and person.suffix in SPELLINGS)]
    if not fields:
        return None
    field = rng.choice(fields)
    return _set(person, field, person.given[0] if field == "given" else SPELLINGS[person.suffix])


def _left_out(person: Person, rng: random.Random, touched: set[str]) -> Change:
    fields = _free(person, touched, ("number", "suffix", "locality", "postcode", "state", "dob", "id"))
    return _set(person, rng.choice(fields), None) if fields else None


def _other_form(person: Person, rng: random.Random, touched: set[str]) -> Change:
    if "given" in touched or person.given not in OTHER_FORMS:
        return None
    return _set(person, "given", rng.choice(OTHER_FORMS[person.given]))


def _transposed(person: Person, rng: random.Random, touched: set[str]) -> Change:
    found = [(f, at) for f in _free(person, touched, ("dob", "id", "postcode", "number"))
             for at in range(len(getattr(person, f)) - 1) if getattr(person, f)[at] != getattr(person, f)[at + 1]]
    if not found:
        return None
    field, at = rng.choice(found)
    value = getattr(person, field)
    return _set(person, field, value[:at] + value[at + 1] + value[at] + value[at + 2 :])


CORRUPT = (_mistyped, _misread, _names_swapped, _abbreviated, _left_out, _other_form, _transposed)


def generate(n: int, seed: int, out_dir: Path) -> tuple[Path, Path]:
    """Write ``records.txt`` and ``true_pairs.tsv`` into ``out_dir``."""
    people = People(n, seed)
    return people.write(out_dir, people.text)


def main(argv: list[str] | None = None) -> None:
    command_line("python -m bench.people", __doc__, "python -m bench.people --n 10000 --seed 1 --out-dir bench/data/people",
                 lambda args: generate(args.n, args.seed, args.out_dir), argv)


if __name__ == "__main__":
    main()
