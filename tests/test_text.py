"""Numbers and docstrings in the words a person reads in a message."""

from kda_sim.text import ordinal, plain, probability


def test_ordinal() -> None:
    got = [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)]
    assert got == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th",
        "21st", "22nd", "23rd", "101st", "111th", "112th",
    ]  # fmt: skip


def test_probability_is_a_plain_number() -> None:
    assert probability(-1) == "0.1"
    assert probability(-3.5) == "0.000316"
    assert probability(-7.2) == "6.3e-8 (about 1 in 16 million)"
    assert probability(-9) == "1e-9 (about 1 in 1 billion)"
    assert probability(-20) == "1e-20 (about 1 in 10^20)"
    # far past a float's range, still a number and not 0
    assert probability(-1262611.6) == "2.5e-1262612 (about 1 in 10^1262612)"


def test_plain_takes_the_rest_markup_off_and_keeps_the_words() -> None:
    doc = "``kda-sim x``: see :mod:`kda_sim.compare` and :func:`~kda_sim.a.b` (`one` tick)."
    assert plain(doc) == "kda-sim x: see kda_sim.compare and kda_sim.a.b (`one` tick)."
