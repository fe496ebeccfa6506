#!/usr/bin/python3
"""testio_campaign.statistics on fixed data with known answers: the sources are named beside each.
No binary and no network. Usage: campaign_statistics_test.py [SRC_PYTHON_DIR] (default: the
tree's src/python beside this file)."""
import math
import os
import sys

import harness
from harness import check

tests = []


def test(function):
    tests.append(function)
    return function


def close(found, wanted, what, tolerance=1e-9):
    check(found is not None and math.isclose(found, wanted, rel_tol=tolerance, abs_tol=tolerance),
          f"{what}: {found}, wanted {wanted}")


@test
def percentiles_interpolate_as_numpy_does():
    # numpy.percentile's documented examples (linear, Hyndman and Fan type 7): the median of
    # 10,7,4,3,2,1 is 3.5; the quartiles of 1..4 are 1.75 and 3.25.
    close(statistics.percentiles([10, 7, 4, 3, 2, 1], [50])[0], 3.5, "median of six")
    found = statistics.percentiles([1, 2, 3, 4], [0, 25, 50, 75, 100])
    check(found == [1, 1.75, 2.5, 3.25, 4], f"quartiles of 1..4: {found}")
    check(statistics.percentiles([], [50]) == [None], "no values, no percentile")


@test
def median_interval_ranks_follow_the_binomial_table():
    # Campbell and Gardner, BMJ 1988;296:1454 (table of ranks for the median's 95% interval):
    # n=6 ranks 1 and 6 (96.9%), n=10 ranks 2 and 9 (97.9%), n=20 ranks 6 and 15 (95.9%).
    # By hand: coverage of [X(k), X(n-k+1)] is 1 - 2 P(Bin(n, 1/2) <= k-1); for n=20, k=6:
    # P(Bin <= 5) = 21700/2^20, so 1 - 43400/1048576.
    check(statistics.median_interval_ranks(5) is None, "n=5 has no 95% interval (at most 1-2/32 = 93.75%)")
    low, high, coverage = statistics.median_interval_ranks(6)
    check((low, high) == (1, 6), f"n=6: {low}, {high}")
    close(coverage, 1 - 2 / 64, "n=6 coverage")
    low, high, coverage = statistics.median_interval_ranks(10)
    check((low, high) == (2, 9), f"n=10: {low}, {high}")
    close(coverage, 1 - 2 * 11 / 1024, "n=10 coverage")
    low, high, coverage = statistics.median_interval_ranks(20)
    check((low, high) == (6, 15), f"n=20: {low}, {high}")
    close(coverage, 1 - 43400 / 1048576, "n=20 coverage")


@test
def describe_gives_every_figure():
    # Mean 5 and sum of squares 32 (the population stdev of 2 in textbooks): sample stdev sqrt(32/7).
    values = [2, 4, 4, 4, 5, 5, 7, 9]
    figures = statistics.describe(values)
    check(figures["n"] == 8 and figures["min"] == 2 and figures["max"] == 9, f"{figures}")
    close(figures["mean"], 5, "mean")
    close(figures["median"], 4.5, "median")
    close(figures["stdev"], math.sqrt(32 / 7), "stdev")
    close(figures["cv"], math.sqrt(32 / 7) / 5, "cv")
    # n=8: ranks 1 and 8 (99.2%); ranks 2 and 7 reach only 1 - 2*9/256 = 93.0%.
    check(figures["ci95"] == [2, 9] and figures["ci95_exact"], f"{figures}")
    # Quartiles (type 7) 4 and 5.5, IQR 1.5, upper fence 7.75: the 9 (index 7) is outside.
    check(figures["outliers"] == [7], f"{figures['outliers']}")


@test
def describe_on_ten_values_uses_the_second_and_ninth():
    figures = statistics.describe([13, 1, 12, 2, 11, 3, 10, 4, 9, 5])
    check(figures["ci95"] == [2, 12] and figures["ci95_exact"], f"{figures['ci95']}")
    close(figures["ci95_coverage"], 1 - 22 / 1024, "coverage")


@test
def few_values_get_min_and_max_and_say_so():
    figures = statistics.describe([3.0, 1.0, 2.0, 5.0, 4.0])
    check(figures["ci95"] == [1.0, 5.0] and figures["ci95_exact"] is False, f"{figures}")
    close(figures["ci95_coverage"], 1 - 2 / 32, "n=5 coverage")
    one = statistics.describe([7.0])
    check(one["median"] == 7.0 and one["stdev"] is None and one["cv"] is None, f"{one}")


@test
def tukey_fences_flag_the_far_run():
    # 1, 2, 3, 4, 100: Q1 2, Q3 4, IQR 2, fences -1 and 7: only 100 (index 4) is outside.
    check(statistics.describe([1, 2, 3, 4, 100])["outliers"] == [4], "100 is an outlier")
    check(statistics.describe([100, 1, 2, 3, 4, -90])["outliers"] == [0, 5], "both ends")
    check(statistics.tukey_outliers([1, 50, 100]) == [], "three values are not fenced")


@test
def empty_input_has_no_figures():
    figures = statistics.describe([])
    check(figures["n"] == 0 and figures["median"] is None and figures["ci95"] == [None, None], f"{figures}")
    check(statistics.mann_whitney([], [1.0])["p"] is None, "an empty sample has no p")
    check(statistics.ratio_of_medians([], [1.0])["ratio"] is None, "an empty sample has no ratio")


@test
def mann_whitney_exact_matches_the_published_example():
    # scipy.stats.mannwhitneyu's documentation (after Conover's example of ages): males
    # 19 22 16 29 24 against females 20 11 17 12: U1 = 17, exact two-sided p = 0.1111 (= 14/126).
    result = statistics.mann_whitney([19, 22, 16, 29, 24], [20, 11, 17, 12])
    check(result["method"] == "exact" and result["u"] == 17, f"{result}")
    close(result["p"], 14 / 126, "p")


@test
def mann_whitney_exact_on_separated_samples():
    # Five values all below five others: one arrangement of C(10, 5) = 252 at each extreme.
    result = statistics.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    check(result["u"] == 0 and result["method"] == "exact", f"{result}")
    close(result["p"], 2 / 252, "p")
    # U's distribution for 3 and 3 values (any table of the Mann-Whitney null): 1 1 2 3 3 3 3 2 1 1.
    check(statistics.exact_u_counts(3, 3) == [1, 1, 2, 3, 3, 3, 3, 2, 1, 1], "counts for 3 and 3")
    # ... which is the smallest p those counts allow: 2/252 for 5 a side, 2/20 for 3, 2/70 for 4.
    close(statistics.smallest_p(5, 5), result["p"], "smallest p for 5 and 5")
    close(statistics.smallest_p(3, 3), 0.1, "smallest p for 3 and 3")
    close(statistics.smallest_p(4, 4), 2 / 70, "smallest p for 4 and 4")
    check(statistics.smallest_p(0, 4) == 1.0 and statistics.smallest_p(1, 1) == 1.0, "no runs, or one a side")


@test
def mann_whitney_exact_agrees_with_the_critical_value_table():
    # Tables of critical U (e.g. Siegel and Castellan, Nonparametric Statistics, table J): for
    # 10 and 10 values at alpha 0.05 two-sided the critical U is 23: U <= 23 is significant, 24 not.
    counts = statistics.exact_u_counts(10, 10)
    total = math.comb(20, 10)
    check(2 * sum(counts[:24]) / total <= 0.05, "U = 23 is significant")
    check(2 * sum(counts[:25]) / total > 0.05, "U = 24 is not")


@test
def mann_whitney_normal_with_ties_by_hand():
    # a 1 2 2 3, b 2 3 4 5. U of a: 0 + 0.5 + 0.5 + 1.5 = 2.5; mean 8. Ties: three 2s and two 3s,
    # sum(t^3 - t) = 24 + 6 = 30; variance 4*4/12 * (9 - 30/56) = 11.2857...; with the continuity
    # correction z = (5.5 - 0.5) / sqrt(variance), p = erfc(z / sqrt 2) = 0.1367.
    result = statistics.mann_whitney([1, 2, 2, 3], [2, 3, 4, 5])
    check(result["method"] == "normal" and result["u"] == 2.5, f"{result}")
    variance = 16 / 12 * (9 - 30 / 56)
    close(result["p"], math.erfc(5 / math.sqrt(variance) / math.sqrt(2)), "p")
    close(result["p"], 0.1367, "p to four places", tolerance=1e-3)


@test
def mann_whitney_normal_for_large_samples():
    # The published example again with the asymptotic method (scipy's documentation: 0.1113;
    # by hand: variance 5*4/12*10 = 16.67, z = 6.5/4.082).
    z = 6.5 / math.sqrt(5 * 4 / 12 * 10)
    close(statistics.normal_two_sided_p(17, 5, 4, []), math.erfc(z / math.sqrt(2)), "asymptotic p")
    close(statistics.normal_two_sided_p(17, 5, 4, []), 0.1113, "asymptotic p to four places", tolerance=1e-3)
    a, b = [float(i) for i in range(30)], [float(i) + 0.5 for i in range(30)]
    result = statistics.mann_whitney(a, b)
    check(result["method"] == "normal" and result["p"] > 0.5, f"{result}")
    check(statistics.mann_whitney([5.0] * 6, [5.0] * 6)["p"] == 1.0, "all equal: p 1")


@test
def ratio_of_medians_is_deterministic():
    a, b = [10.0, 11.0, 9.0, 10.0, 12.0], [20.0, 21.0, 19.0, 22.0, 20.0]
    first = statistics.ratio_of_medians(a, b, seed=7)
    check(first == statistics.ratio_of_medians(a, b, seed=7), "the same seed gives the same interval")
    close(first["ratio"], 2.0, "ratio")
    low, high = first["ci95"]
    check(low <= 2.0 <= high, f"the interval {first['ci95']} holds the ratio")
    # Every resample of a constant sample has the same median: the interval is the point.
    constant = statistics.ratio_of_medians([4.0] * 5, [5.0] * 5)
    check(constant == {"ratio": 1.25, "ci95": [1.25, 1.25]}, f"{constant}")
    check(statistics.ratio_of_medians([0.0, 0.0], [1.0])["ratio"] is None, "a zero median has no ratio")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "src", "python"))
    from testio_campaign import statistics
    sys.exit(harness.run_tap(tests))
