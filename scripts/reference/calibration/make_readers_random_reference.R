# A clustered study and its readers-random comparison (verdict.readers_random), computed the naive
# way with base R from the published formulas, for calibration/tests/readers_random.rs:
#
#   Rscript scripts/reference/calibration/make_readers_random_reference.R > calibration/tests/data/readers_random_reference.json
#
# Independent of the crate's arithmetic: every jackknife value is cor() recomputed on the items
# left after deleting a whole case (the crate subtracts per-case sums instead).
#
# Figure of merit of held-out clinician j (items the grader, j and another clinician scored):
#   psi_j = cor(grader, mean of the others) - cor(j, mean of the others).
# Single-treatment Obuchowski-Rockette with the grader a fixed reader and clinicians random
# (Hillis SL 2007, Stat Med 26:596-619, p. 607):
#   Var, Cov2 = mean jackknife variance / covariance (different readers) of psi, each the
#               sample covariance over cases times (K - 1)^2 / K (Obuchowski-Rockette's scaling
#               of the jackknife);
#   MS_R = sample variance of psi_j over readers;  MS_den = MS_R + max(J * Cov2, 0);
#   df = MS_den^2 / (MS_R^2 / (J - 1));  mean(psi) +/- qt(0.975, df) * sqrt(MS_den / J).
# The same file holds verdict.attainable_r (sqrt of ICC(A,k), below) and the disattenuated r.
# Generated data (seed 20261128), MIT like the repository.

set.seed(20261128)
n_cases <- 15; per_case <- 4
clinicians <- c("dr_a", "dr_b", "dr_c", "dr_d")
noise <- c(0.45, 0.6, 0.8, 0.7)
bias <- c(0, 0.2, -0.3, 0.1)
to_scale <- function(x) pmin(5, pmax(1, round(3 + x)))

rows <- list()
for (c in 1:n_cases) {
  case_effect <- rnorm(1, 0, 1)
  grader_case_error <- rnorm(1, 0, 0.35)
  for (t in 1:per_case) {
    item <- sprintf("case%02d/t%d", c, t)
    truth <- case_effect + rnorm(1, 0, 0.7)
    for (j in seq_along(clinicians)) {
      # dr_d read only the first 10 cases.
      if (clinicians[j] == "dr_d" && c > 10) next
      rows[[length(rows) + 1]] <- data.frame(item = item, case = sprintf("case%02d", c),
        rater = clinicians[j], score = to_scale(truth + bias[j] + rnorm(1, 0, noise[j])))
    }
    # The grader skipped one item.
    if (!(c == 3 && t == 2)) {
      rows[[length(rows) + 1]] <- data.frame(item = item, case = sprintf("case%02d", c),
        rater = "grader", score = to_scale(truth + grader_case_error + rnorm(1, 0, 0.5)))
    }
  }
}
scores <- do.call(rbind, rows)
wide <- reshape(scores[, c("item", "rater", "score")], idvar = "item", timevar = "rater",
                direction = "wide")
names(wide) <- sub("^score\\.", "", names(wide))
case_of <- sub("/.*$", "", wide$item)

# Per held-out clinician: the items, and psi on a subset of them.
held_out <- lapply(clinicians, function(j) {
  others <- setdiff(clinicians, j)
  m <- rowMeans(wide[, others, drop = FALSE], na.rm = TRUE)
  ok <- !is.na(wide$grader) & !is.na(wide[[j]]) & !is.nan(m)
  list(g = wide$grader[ok], h = wide[[j]][ok], m = m[ok], case = case_of[ok])
})
psi_of <- function(d, keep) cor(d$g[keep], d$m[keep]) - cor(d$h[keep], d$m[keep])

used_cases <- sort(unique(unlist(lapply(held_out, function(d) d$case))))
J <- length(clinicians); K <- length(used_cases)
psi <- sapply(held_out, function(d) psi_of(d, rep(TRUE, length(d$g))))
jack <- t(sapply(held_out, function(d) sapply(used_cases, function(k) {
  keep <- d$case != k
  if (sum(keep) < 4) stop("a clinician would have fewer than 4 items without one case")
  psi_of(d, keep)
})))
scale <- (K - 1)^2 / K
S <- cov(t(jack)) * scale
var_error <- mean(diag(S))
cov2 <- mean(S[row(S) != col(S)])
ms_r <- var(psi)
ms_den <- ms_r + max(J * cov2, 0)
df <- ms_den^2 / (ms_r^2 / (J - 1))
se <- sqrt(ms_den / J)
estimate <- mean(psi)
low <- estimate - qt(0.975, df) * se
high <- estimate + qt(0.975, df) * se

# What the panel allows (verdict.attainable_r): ICC(A,k) of the largest complete panel, McGraw &
# Wong (1996) case 2A, average of k raters, with its F interval as irr 0.84.1 computes it
# (irr::icc(model = "twoway", type = "agreement", unit = "average"), written out here). The panel:
# dr_a, dr_b, dr_c on all 60 items (180 scores) beats all four on dr_d's 40 (160).
panel <- c("dr_a", "dr_b", "dr_c")
stopifnot(60 * 3 > 40 * 4, all(!is.na(as.matrix(wide[, panel]))))
x <- as.matrix(wide[, panel]); ns <- nrow(x); k <- ncol(x); grand <- mean(x)
ss_total <- sum((x - grand)^2)
ss_rows <- k * sum((rowMeans(x) - grand)^2)
ss_cols <- ns * sum((colMeans(x) - grand)^2)
ms_items <- ss_rows / (ns - 1); ms_raters <- ss_cols / (k - 1)
ms_error <- (ss_total - ss_rows - ss_cols) / ((ns - 1) * (k - 1))
icc_ak <- (ms_items - ms_error) / (ms_items + (ms_raters - ms_error) / ns)
single <- (ms_items - ms_error) / (ms_items + (k - 1) * ms_error + (k / ns) * (ms_raters - ms_error))
a <- (k * single) / (ns * (1 - single))
b <- 1 + (k * single * (ns - 1)) / (ns * (1 - single))
v <- (a * ms_raters + b * ms_error)^2 / ((a * ms_raters)^2 / (k - 1) + (b * ms_error)^2 / ((ns - 1) * (k - 1)))
fl <- qf(0.975, ns - 1, v); fu <- qf(0.975, v, ns - 1)
icc_low <- ns * (ms_items - fl * ms_error) / (fl * (ms_raters - ms_error) + ns * ms_items)
icc_high <- ns * (fu * ms_items - ms_error) / (ms_raters - ms_error + ns * fu * ms_items)
# The verdict's r: the grader against the mean of the clinicians who scored each item.
all_mean <- rowMeans(wide[, clinicians], na.rm = TRUE)
has <- !is.na(wide$grader)
verdict_r <- cor(wide$grader[has], all_mean[has])

num <- function(x) sprintf("%.17g", x)
cat("{\n")
cat('  "origin": "scripts/reference/calibration/make_readers_random_reference.R (seed 20261128)",\n')
cat('  "licence": "generated data, MIT like the repository",\n')
cat('  "r_version": "', R.version.string, '",\n', sep = "")
cat('  "scores": [\n')
cat(paste(sprintf('    {"item": "%s", "case": "%s", "rater": "%s", "score": %s}', scores$item,
                  scores$case, scores$rater, num(scores$score)), collapse = ",\n"), "\n")
cat('  ],\n')
cat('  "expected": {\n')
cat('    "psi": [', paste(num(psi), collapse = ", "), '],\n', sep = "")
cat('    "estimate": ', num(estimate), ', "low": ', num(low), ', "high": ', num(high), ',\n', sep = "")
cat('    "df": ', num(df), ', "var_error": ', num(var_error), ', "cov2": ', num(cov2), ', "ms_r": ', num(ms_r), ',\n', sep = "")
cat('    "n_readers": ', J, ', "n_cases": ', K, ',\n', sep = "")
cat('    "icc_ak": ', num(icc_ak), ', "icc_ak_low": ', num(icc_low), ', "icc_ak_high": ', num(icc_high), ',\n', sep = "")
cat('    "attainable_r": ', num(sqrt(icc_ak)), ', "attainable_low": ', num(sqrt(max(icc_low, 0))),
    ', "attainable_high": ', num(sqrt(min(icc_high, 1))), ',\n', sep = "")
cat('    "verdict_r": ', num(verdict_r), ', "disattenuated_r": ', num(verdict_r / sqrt(icc_ak)), '\n', sep = "")
cat('  }\n}\n')
