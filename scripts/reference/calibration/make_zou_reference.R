#!/usr/bin/env Rscript
# Bland-Altman limits of agreement with several pairs per case and their 95 % intervals by Zou
# (2013, Stat Methods Med Res 22(6):630-642), written out in base R from the paper's formulas as
# SimplyAgree's agree_nest() codes them (github.com/arcaldwell49/SimplyAgree, R/agree_nest.R),
# two-sided 95 % (its TOST = FALSE), with two deliberate differences: the bias interval uses
# t(n_cases - 1) instead of the normal quantile, and the pooled within-case variance divides by
# N - n_cases over every case (agree_nest divides by N minus the cases with two or more pairs,
# which counts a single-pair case's pair as within-case degrees of freedom).
#
# Run once; the output is committed as calibration/tests/data/zou_reference.json and read by
# calibration/tests/intervals.rs:
#
#     Rscript scripts/reference/calibration/make_zou_reference.R \
#         > calibration/tests/data/zou_reference.json
#
# The study: 14 cases of 1 to 6 items, grader - clinician differences with a case effect of SD 0.6
# (the items of a case share images and difficulty) and an item effect of SD 0.4.

set.seed(20261129)
sizes <- sample(1:6, 14, replace = TRUE)
case <- rep(sprintf("case-%02d", seq_along(sizes)), sizes)
clinician <- round(rnorm(length(case), 3, 0.8), 3)
case_effect <- rnorm(length(sizes), 0.3, 0.6)
grader <- round(clinician + rep(case_effect, sizes) + rnorm(length(case), 0, 0.4), 3)

d <- grader - clinician
n <- length(sizes)
N <- length(d)
m <- as.vector(table(case)[unique(case)])
means <- as.vector(tapply(d, case, mean)[unique(case)])
bias <- mean(means)
between <- var(means)
within <- sum(tapply(d, case, function(x) sum((x - mean(x))^2))) / (N - n)
harmonic <- n / sum(1 / m)
total <- between + (1 - 1 / harmonic) * within
z <- qnorm(0.975)
sd_total <- sqrt(total)
total_low <- total - sqrt((between * (1 - (n - 1) / qchisq(0.975, n - 1)))^2 +
                          ((1 - 1 / harmonic) * within * (1 - (N - n) / qchisq(0.975, N - n)))^2)
total_high <- total + sqrt((between * ((n - 1) / qchisq(0.025, n - 1) - 1))^2 +
                           ((1 - 1 / harmonic) * within * ((N - n) / qchisq(0.025, N - n) - 1))^2)
bias_half <- qt(0.975, n - 1) * sqrt(between / n)
outward <- sqrt(bias_half^2 + z^2 * (sqrt(total_high) - sd_total)^2)
inward <- sqrt(bias_half^2 + z^2 * (sd_total - sqrt(max(total_low, 0)))^2)
loa_low <- bias - z * sd_total
loa_high <- bias + z * sd_total

num <- function(x) sprintf("%.17g", x)
vec <- function(x) paste(num(x), collapse = ", ")
cat(sprintf(paste0(
  "{\"origin\": \"scripts/reference/calibration/make_zou_reference.R (seed 20261129)\",\n",
  " \"licence\": \"generated data, MIT like the repository\",\n",
  " \"versions\": {\"R\": \"%s\"},\n",
  " \"grader\": [%s],\n \"clinician\": [%s],\n \"cases\": [%s],\n",
  " \"expected\": {\"bias\": %s, \"sd\": %s, \"loa_low\": %s, \"loa_high\": %s,\n",
  "  \"bias_ci_low\": %s, \"bias_ci_high\": %s,\n",
  "  \"loa_low_ci_low\": %s, \"loa_low_ci_high\": %s,\n",
  "  \"loa_high_ci_low\": %s, \"loa_high_ci_high\": %s, \"n\": %d, \"n_cases\": %d}}\n"),
  paste(R.version$major, R.version$minor, sep = "."), vec(grader), vec(clinician),
  paste(sprintf("\"%s\"", case), collapse = ", "),
  num(bias), num(sd_total), num(loa_low), num(loa_high),
  num(bias - bias_half), num(bias + bias_half),
  num(loa_low - outward), num(loa_low + inward),
  num(loa_high - inward), num(loa_high + outward), N, n))
