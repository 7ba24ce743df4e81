"""The ICC formulas of R's irr package (Gamer, Lemon, Fellows & Singh, irr 0.84.1, function
`icc`), written out in Python so that the reference intervals are unrounded (pingouin rounds its
CI95 to two decimals).

Transcribed from irr's `icc.R` for model = "twoway", type = "agreement", unit = "single"
(McGraw & Wong 1996, case 2A / Shrout & Fleiss ICC(2,1)) and for the one-way and consistency
single forms; the mean-of-k ("average") forms are McGraw & Wong's closed forms, written out
independently of the single forms (not as Spearman-Brown steps of them). The only generalisation: `df_rows`, the degrees of freedom of the between-targets
mean square, is ns - 1 in irr; the test-retest reference passes ns - C when the targets are nested
in C clinicians whose means were removed (every other term is irr's).
"""

from scipy.stats import f


def agreement_single(ms_rows, ms_cols, ms_error, ns, raters, df_rows=None, alpha=0.05):
    """irr::icc(model="twoway", type="agreement", unit="single"): value and 95 % interval."""
    if df_rows is None:
        df_rows = ns - 1
    coeff = (ms_rows - ms_error) / (
        ms_rows + (raters - 1) * ms_error + (raters / ns) * (ms_cols - ms_error))
    a = (raters * coeff) / (ns * (1 - coeff))
    b = 1 + (raters * coeff * (ns - 1)) / (ns * (1 - coeff))
    v = (a * ms_cols + b * ms_error) ** 2 / (
        (a * ms_cols) ** 2 / (raters - 1) + (b * ms_error) ** 2 / ((ns - 1) * (raters - 1)))
    fl = f.ppf(1 - alpha / 2, df_rows, v)
    fu = f.ppf(1 - alpha / 2, v, df_rows)
    low = (ns * (ms_rows - fl * ms_error)) / (
        fl * (raters * ms_cols + (raters * ns - raters - ns) * ms_error) + ns * ms_rows)
    high = (ns * (fu * ms_rows - ms_error)) / (
        raters * ms_cols + (raters * ns - raters - ns) * ms_error + ns * fu * ms_rows)
    return coeff, low, high


def consistency_single(ms_rows, ms_error, ns, raters, alpha=0.05):
    """irr::icc(model="twoway", type="consistency", unit="single")."""
    coeff = (ms_rows - ms_error) / (ms_rows + (raters - 1) * ms_error)
    fvalue = ms_rows / ms_error
    df1, df2 = ns - 1, (ns - 1) * (raters - 1)
    fl = fvalue / f.ppf(1 - alpha / 2, df1, df2)
    fu = fvalue * f.ppf(1 - alpha / 2, df2, df1)
    return coeff, (fl - 1) / (fl + (raters - 1)), (fu - 1) / (fu + (raters - 1))


def oneway_single(ms_rows, ms_within, ns, raters, alpha=0.05):
    """irr::icc(model="oneway", unit="single")."""
    coeff = (ms_rows - ms_within) / (ms_rows + (raters - 1) * ms_within)
    fvalue = ms_rows / ms_within
    df1, df2 = ns - 1, ns * (raters - 1)
    fl = fvalue / f.ppf(1 - alpha / 2, df1, df2)
    fu = fvalue * f.ppf(1 - alpha / 2, df2, df1)
    return coeff, (fl - 1) / (fl + (raters - 1)), (fu - 1) / (fu + (raters - 1))


def oneway_average(ms_rows, ms_within, ns, raters, alpha=0.05):
    """irr::icc(model="oneway", unit="average"): McGraw & Wong (1996) ICC(1,k), 1 - 1/F."""
    coeff = (ms_rows - ms_within) / ms_rows
    fvalue = ms_rows / ms_within
    df1, df2 = ns - 1, ns * (raters - 1)
    fl = fvalue / f.ppf(1 - alpha / 2, df1, df2)
    fu = fvalue * f.ppf(1 - alpha / 2, df2, df1)
    return coeff, 1 - 1 / fl, 1 - 1 / fu


def consistency_average(ms_rows, ms_error, ns, raters, alpha=0.05):
    """irr::icc(model="twoway", type="consistency", unit="average"): ICC(C,k), 1 - 1/F."""
    coeff = (ms_rows - ms_error) / ms_rows
    fvalue = ms_rows / ms_error
    df1, df2 = ns - 1, (ns - 1) * (raters - 1)
    fl = fvalue / f.ppf(1 - alpha / 2, df1, df2)
    fu = fvalue * f.ppf(1 - alpha / 2, df2, df1)
    return coeff, 1 - 1 / fl, 1 - 1 / fu


def agreement_average(ms_rows, ms_cols, ms_error, ns, raters, alpha=0.05):
    """irr::icc(model="twoway", type="agreement", unit="average"): McGraw & Wong's (1996)
    closed form of ICC(A,k) and its interval (their Table 7, case 2A), with the Satterthwaite
    degrees of freedom v of the single-rater form (a and b from ICC(A,1))."""
    single = (ms_rows - ms_error) / (
        ms_rows + (raters - 1) * ms_error + (raters / ns) * (ms_cols - ms_error))
    coeff = (ms_rows - ms_error) / (ms_rows + (ms_cols - ms_error) / ns)
    a = (raters * single) / (ns * (1 - single))
    b = 1 + (raters * single * (ns - 1)) / (ns * (1 - single))
    v = (a * ms_cols + b * ms_error) ** 2 / (
        (a * ms_cols) ** 2 / (raters - 1) + (b * ms_error) ** 2 / ((ns - 1) * (raters - 1)))
    fl = f.ppf(1 - alpha / 2, ns - 1, v)
    fu = f.ppf(1 - alpha / 2, v, ns - 1)
    low = ns * (ms_rows - fl * ms_error) / (fl * (ms_cols - ms_error) + ns * ms_rows)
    high = ns * (fu * ms_rows - ms_error) / (ms_cols - ms_error + ns * fu * ms_rows)
    return coeff, low, high


def mean_squares(matrix):
    """Two-way ANOVA without replication of an ns x raters list of lists, as irr computes it:
    (MSr, MSw, MSc, MSe)."""
    import numpy as np
    x = np.asarray(matrix, dtype=float)
    ns, raters = x.shape
    grand = x.mean()
    ss_total = ((x - grand) ** 2).sum()
    ss_rows = raters * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = ns * ((x.mean(axis=0) - grand) ** 2).sum()
    ms_rows = ss_rows / (ns - 1)
    ms_within = (ss_total - ss_rows) / (ns * (raters - 1))
    ms_cols = ss_cols / (raters - 1)
    ms_error = (ss_total - ss_rows - ss_cols) / ((ns - 1) * (raters - 1))
    return ms_rows, ms_within, ms_cols, ms_error
