import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeexec.producer import pass_at_k


def exact(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (10, 3, 1, 0.3),  # pass@1 is the fraction correct
        (10, 0, 5, 0.0),
        (10, 10, 5, 1.0),
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (4, 2, 3, 1.0),  # n - c < k: every draw of 3 holds a correct sample
        (3, 1, 5, 1.0),  # k > n: whether any sample is correct
        (3, 0, 5, 0.0),
        (0, 0, 1, 0.0),
    ],
)
def test_worked_examples(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k"), [(-1, 0, 1), (5, -1, 1), (5, 1, 0), (5, 1, -2), (5, 6, 1)])
def test_invalid_counts_raise_value_error(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_non_integer_counts_raise_type_error() -> None:
    with pytest.raises(TypeError):
        pass_at_k(10.0, 3, 1)  # type: ignore[arg-type]


def test_stable_for_n_in_the_thousands() -> None:
    # One correct sample in 5000: pass@1 is exactly 1/5000, and tiny values keep their precision.
    assert pass_at_k(5000, 1, 1) == 1 / 5000
    assert pass_at_k(5000, 1, 10) == pytest.approx(10 / 5000, rel=1e-12)
    assert pass_at_k(8000, 4000, 1000) == 1.0 - float(Fraction(math.comb(4000, 1000), math.comb(8000, 1000)))


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, 320))))
def test_matches_the_exact_fraction(args: tuple[int, int, int]) -> None:
    n, c, k = args
    expected = float(c > 0) if k > n else float(exact(n, c, k))
    assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-300)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_monotone_in_k_and_c(args: tuple[int, int, int]) -> None:
    n, c, k = args
    value = pass_at_k(n, c, k)
    assert 0.0 <= value <= 1.0
    if k < n:
        assert pass_at_k(n, c, k + 1) >= value
    if c < n:
        assert pass_at_k(n, c + 1, k) >= value
