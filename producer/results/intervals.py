"""How sure a pass@k is: intervals over tasks, and whether one task's pass rate moved between two runs.

A run's pass@k is a mean over tasks, and the tasks are the sample a benchmark drew: the interval is a
percentile bootstrap over tasks (resampled with replacement, RESAMPLES times, from a fixed seed, so
the same counts always give the same interval). Two runs are compared on the tasks they share by the
same bootstrap of the per-task differences (paired: a hard task is hard for both). A bootstrap over
tasks says nothing of the noise within a task (its n samples); with few tasks it is optimistic.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

RESAMPLES = 1000  # what a 95 % percentile interval needs (Efron & Tibshirani), at ~0.1 s for 1,000 tasks
SEED = 20261202
LEVEL = 0.95


def bootstrap_interval(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """The 95 % percentile-bootstrap interval of the mean of `values` (one per task)."""
    if not values:
        raise ValueError("no values to resample")
    draw = random.Random(seed).choices
    count = len(values)
    means = sorted(math.fsum(draw(values, k=count)) / count for _ in range(resamples))
    tail = (1 - LEVEL) / 2
    low, high = means[int(tail * resamples)], means[math.ceil((1 - tail) * resamples) - 1]
    # A mean of resampled values lies between their least and greatest, and the interval holds the
    # mean itself: division can round a hair past either.
    least, most = min(values), max(values)
    mean = min(max(math.fsum(values) / count, least), most)
    return max(min(low, mean), least), min(max(high, mean), most)


def fisher_exact(c_a: int, n_a: int, c_b: int, n_b: int) -> float:
    """The two-sided p-value of Fisher's exact test that c_a of n_a and c_b of n_b come from one rate:
    the probability, with the passes dealt at random between the two, of a table no likelier than this one."""
    passes, total = c_a + c_b, n_a + n_b
    if total == 0:
        return 1.0
    ways = math.comb(total, n_a)

    def chance(x: int) -> float:
        return math.comb(passes, x) * math.comb(total - passes, n_a - x) / ways

    observed = chance(c_a)
    possible = range(max(0, n_a - (total - passes)), min(passes, n_a) + 1)
    return min(1.0, math.fsum(p for p in map(chance, possible) if p <= observed * (1 + 1e-7)))


MOVED_BY = 0.5  # a change of pass@1 larger than this counts whatever the sample sizes (n = 1: any flip)
SIGNIFICANT = 0.05


def differs(c_a: int, n_a: int, c_b: int, n_b: int) -> bool:
    """Whether a task's pass@1 (c / n) moved between two runs by more than noise: by more than MOVED_BY,
    or by a difference Fisher's exact test finds significant (p < 0.05). With one sample a side no
    test can tell, and a flip from fail to pass counts; with ten a side, 1 of 10 against 7 of 10 does
    (p = 0.02), 2 of 10 against 7 of 10 does not (p = 0.07)."""
    if not (n_a and n_b):
        return False
    return abs(c_b / n_b - c_a / n_a) > MOVED_BY or fisher_exact(c_a, n_a, c_b, n_b) < SIGNIFICANT
