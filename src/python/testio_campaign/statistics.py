"""The statistics of campaigns and comparisons: pure functions on lists of floats, no I/O.

Throughput runs are few (3 to 20 per cell), skewed and prone to outliers (a run that shared the
host with something else), so everything here is distribution-free: medians with order-statistic
intervals, Tukey's fences, a rank test and a bootstrap. docs/compare.md says why in full."""
import math
import random

BOOTSTRAP_RESAMPLES = 2000
# Exact Mann-Whitney p values count every arrangement of the ranks; beyond this many values per
# sample (or with ties, which the exact count assumes away) the normal approximation is used.
EXACT_LIMIT = 20


def percentiles(values, ps):
    """The ps-th percentiles (0..100) of values, interpolated linearly between order statistics
    (Hyndman and Fan's type 7, numpy's default). None for each p when values is empty."""
    ordered = sorted(values)
    if not ordered:
        return [None for _ in ps]
    found = []
    for p in ps:
        if not 0 <= p <= 100:
            raise ValueError(f"percentile {p} is outside 0..100")
        position = (len(ordered) - 1) * p / 100
        below = math.floor(position)
        above = min(below + 1, len(ordered) - 1)
        found.append(ordered[below] + (ordered[above] - ordered[below]) * (position - below))
    return found


def median(values):
    return percentiles(values, [50])[0]


def binomial_cdf_half(k, n):
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly (integers until the last division)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_interval_ranks(n, confidence=0.95):
    """The 1-based ranks (low, high) of the order statistics that bound the median with at least
    `confidence`, and their exact coverage: [X(k), X(n-k+1)] covers the median with probability
    1 - 2 P(Bin(n, 1/2) <= k-1) for any continuous distribution. None when even [min, max] falls
    short (n < 6 for 95%)."""
    best = None
    for k in range(1, n // 2 + 1):
        coverage = 1 - 2 * binomial_cdf_half(k - 1, n)
        if coverage < confidence:
            break
        best = (k, n - k + 1, coverage)
    return best


def tukey_outliers(values):
    """Indices of the values outside Tukey's fences: below Q1 - 1.5 IQR or above Q3 + 1.5 IQR.
    Fewer than 4 values have no quartiles worth fencing with: none are flagged."""
    if len(values) < 4:
        return []
    q1, q3 = percentiles(values, [25, 75])
    spread = 1.5 * (q3 - q1)
    return [i for i, value in enumerate(values) if value < q1 - spread or value > q3 + spread]


def describe(values):
    """n, median, mean, sample stdev, min, max, cv, the median's 95% interval and the outliers'
    indices. ci95_exact is False when n < 6: no pair of order statistics reaches 95%, so ci95 is
    [min, max] and ci95_coverage says what it reaches (93.75% for n = 5)."""
    values = list(values)
    n = len(values)
    if n == 0:
        return {"n": 0, "median": None, "mean": None, "stdev": None, "min": None, "max": None,
                "cv": None, "ci95": [None, None], "ci95_exact": False, "ci95_coverage": None, "outliers": []}
    ordered = sorted(values)
    mean = sum(values) / n
    stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    ranks = median_interval_ranks(n)
    if ranks:
        low, high, coverage = ranks
        ci95 = [ordered[low - 1], ordered[high - 1]]
    else:
        ci95 = [ordered[0], ordered[-1]]
        coverage = 1 - 2 / 2 ** n
    return {"n": n, "median": median(values), "mean": mean, "stdev": stdev,
            "min": ordered[0], "max": ordered[-1],
            "cv": stdev / mean if stdev is not None and mean else None,
            "ci95": ci95, "ci95_exact": ranks is not None, "ci95_coverage": coverage,
            "outliers": tukey_outliers(values)}


def rank_sum_u(a, b):
    """U of sample a: the pairs (x in a, y in b) with x > y, ties counting half."""
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)


def exact_u_counts(m, n):
    """counts[u]: how many of the C(m+n, m) arrangements of two untied samples give U = u.
    Built up one value at a time: the largest value of all is either in the first sample
    (it beats all n of the second: U grows by n) or in the second (U unchanged)."""
    # table[j][u] holds the counts for samples of i and j values, i rising row by row.
    table = [[1] for _ in range(n + 1)]
    for i in range(1, m + 1):
        row = [[1]]
        for j in range(1, n + 1):
            with_a, without = table[j], row[j - 1]
            counts = [0] * (i * j + 1)
            for u, count in enumerate(with_a):
                counts[u + j] += count
            for u, count in enumerate(without):
                counts[u] += count
            row.append(counts)
        table = row
    return table[n]


def normal_two_sided_p(u, m, n, tie_sizes):
    """The normal approximation of U's distribution, with the variance shrunk for ties and a
    continuity correction of 1/2."""
    total = m + n
    mean = m * n / 2
    tie_term = sum(t ** 3 - t for t in tie_sizes) / (total * (total - 1))
    variance = m * n / 12 * ((total + 1) - tie_term)
    if variance <= 0:
        return 1.0  # every value equal: nothing tells the samples apart
    z = max(abs(u - mean) - 0.5, 0) / math.sqrt(variance)
    return math.erfc(z / math.sqrt(2))


def mann_whitney(a, b):
    """The two-sided Mann-Whitney U test of a against b: u (of a), p and method ("exact" or
    "normal"). p is None when either sample is empty."""
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return {"u": None, "p": None, "method": None}
    u = rank_sum_u(a, b)
    tally = {}
    for value in list(a) + list(b):
        tally[value] = tally.get(value, 0) + 1
    tie_sizes = [size for size in tally.values() if size > 1]
    if not tie_sizes and m <= EXACT_LIMIT and n <= EXACT_LIMIT:
        counts = exact_u_counts(m, n)
        arrangements = math.comb(m + n, m)
        whole = int(u)
        at_most = sum(counts[:whole + 1]) / arrangements
        at_least = sum(counts[whole:]) / arrangements
        return {"u": u, "p": min(1.0, 2 * min(at_most, at_least)), "method": "exact"}
    return {"u": u, "p": min(1.0, normal_two_sided_p(u, m, n, tie_sizes)), "method": "normal"}


def smallest_p(n_a, n_b):
    """The smallest two-sided p Mann-Whitney can give n_a runs against n_b: every run of one side
    above every run of the other, 2 of the C(n_a + n_b, n_a) arrangements. 1 when a side is empty."""
    if n_a == 0 or n_b == 0:
        return 1.0
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def ratio_of_medians(a, b, seed=0, resamples=BOOTSTRAP_RESAMPLES):
    """median(b) / median(a) and its 95% percentile-bootstrap interval: each sample resampled
    with replacement on its own, from a generator seeded with `seed`, so the same data give the
    same interval every time. None figures when a sample is empty or a's median is 0."""
    if not a or not b or median(a) == 0:
        return {"ratio": None, "ci95": [None, None]}
    generator = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        median_a = median(generator.choices(a, k=len(a)))
        median_b = median(generator.choices(b, k=len(b)))
        if median_a != 0:
            ratios.append(median_b / median_a)
    low, high = percentiles(ratios, [2.5, 97.5])
    return {"ratio": median(b) / median(a), "ci95": [low, high]}
