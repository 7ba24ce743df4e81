#!/usr/bin/env Rscript
# Clinicians' scores on an unbalanced study with missing ratings, and their variance components as
# lme4 estimates them: REML on every score, crossed random effects, profile-likelihood intervals.
#
# Run once (Debian 12: apt-get install r-cran-lme4); the output is committed as
# calibration/tests/data/reml_reference.json and read by calibration/tests/variance.rs:
#
#     Rscript scripts/reference/calibration/make_reml_reference.R \
#         > calibration/tests/data/reml_reference.json
#
# Two studies, each with some ratings missing (a clinician who read a few items, items read once):
# - "cases": 15 cases of 1 to 6 items, 4 clinicians;
#   lmer(score ~ 1 + (1 | case) + (1 | item) + (1 | rater) + (1 | case:rater), REML = TRUE);
# - "items only": 60 items, each its own case, 5 clinicians;
#   lmer(score ~ 1 + (1 | item) + (1 | rater), REML = TRUE).
# The optimiser runs to tolerances far below lme4's defaults so that the estimates are the REML
# optimum to ~1e-8, not where the default stopping rule left it.
#
# Intervals: the REML profile likelihood of each standard deviation. lme4's own
# confint(method = "profile") refits the model by ML and profiles the ML deviance (its devfun2
# calls refitML), so its intervals are centred on the ML estimates, not these. Here the profile
# is built on lme4's REML criterion (lmer(..., devFunOnly = TRUE), which leaves the penalised
# residual sum of squares in its environment): the full criterion at standard deviations
# (components, residual) is d_R(theta) - df (1 + log(2 pi pwrss / df)) + df log(2 pi s^2) +
# pwrss / s^2 with theta = sd / s and df = n - 1; one standard deviation is held fixed, the
# others minimised by minqa's bobyqa (bounded at 0), and uniroot finds where the signed square
# root of the rise crosses +-qnorm(0.975); a lower limit never reached is 0. Squared here.

suppressPackageStartupMessages(library(lme4))
set.seed(20261129)

generate <- function(sizes, raters, sd, keep) {
  rater_effect <- rnorm(raters, sd = sd[["rater"]])
  rows <- list()
  for (c in seq_along(sizes)) {
    case_effect <- rnorm(1, sd = sd[["case"]])
    case_rater <- rnorm(raters, sd = sd[["case_rater"]])
    for (i in seq_len(sizes[c])) {
      item_effect <- rnorm(1, sd = sd[["item"]])
      readers <- which(runif(raters) < keep)
      if (length(readers) == 0) readers <- sample(raters, 1)
      for (r in readers) {
        rows[[length(rows) + 1]] <- data.frame(
          case = sprintf("case-%02d", c), item = sprintf("case-%02d/t%d", c, i),
          rater = sprintf("dr_%d", r),
          score = 3 + case_effect + item_effect + rater_effect[r] + case_rater[r] +
            rnorm(1, sd = sd[["residual"]]))
      }
    }
  }
  do.call(rbind, rows)
}

control <- lmerControl(optimizer = "nloptwrap", calc.derivs = FALSE,
                       optCtrl = list(xtol_abs = 1e-14, ftol_abs = 1e-15, xtol_rel = 1e-14,
                                      ftol_rel = 1e-15, maxeval = 1e6))

reml_profile <- function(data, formula, model) {
  devfun <- lmer(formula, data = data, REML = TRUE, devFunOnly = TRUE)
  env <- environment(devfun)
  df <- nrow(data) - 1
  full <- function(sds) {
    s <- sds[length(sds)]
    reml <- devfun(sds[-length(sds)] / s)
    pwrss <- env$resp$wrss() + env$pp$sqrL(1)
    reml - df * (1 + log(2 * pi * pwrss / df)) + df * log(2 * pi * s^2) + pwrss / s^2
  }
  sigma <- sigma(model)
  at <- c(getME(model, "theta") * sigma, sigma)
  minimum <- REMLcrit(model)
  z <- qnorm(0.975)
  limits <- matrix(NA, length(at), 2)
  for (p in seq_along(at)) {
    start <- at[-p]
    zeta <- function(v) {
      objective <- function(others) full(append(others, v, after = p - 1))
      lower <- rep(0, length(start))
      if (p != length(at)) lower[length(lower)] <- 1e-8
      opt <- minqa::bobyqa(pmax(start, lower + 1e-6), objective, lower = lower,
                           control = list(rhobeg = 0.05, rhoend = 1e-11, maxfun = 1e5))
      sign(v - at[p]) * sqrt(max(0, opt$fval - minimum))
    }
    tolerance <- 1e-12
    if (p != length(at) && zeta(0) > -z) {
      limits[p, 1] <- 0
    } else {
      inner <- if (p == length(at)) at[p] / 2 else 0
      while (zeta(inner) > -z) inner <- inner / 2
      limits[p, 1] <- uniroot(function(v) zeta(v) + z, c(inner, at[p]), tol = tolerance)$root
    }
    outer <- at[p] + 0.5 * sqrt(sum(at^2))
    while (zeta(outer) < z) outer <- at[p] + 2 * (outer - at[p])
    limits[p, 2] <- uniroot(function(v) zeta(v) - z, c(at[p], outer), tol = tolerance)$root
  }
  limits^2
}

fit <- function(data, formula, names) {
  model <- lmer(formula, data = data, REML = TRUE, control = control)
  vc <- as.data.frame(VarCorr(model))
  estimates <- setNames(vc$vcov, ifelse(is.na(vc$var1), "residual", names[vc$grp]))
  # getME(, "theta") is in VarCorr's order, the residual last.
  limits <- reml_profile(data, formula, model)
  intervals <- list()
  for (j in seq_along(estimates)) intervals[[names(estimates)[j]]] <- limits[j, ]
  list(estimates = as.list(estimates), intervals = intervals,
       reml_criterion = REMLcrit(model), intercept = unname(fixef(model)[1]))
}

num <- function(x) sprintf("%.17g", x)
json_object <- function(x) {
  parts <- vapply(names(x), function(n) {
    v <- x[[n]]
    value <- if (length(v) > 1) sprintf("[%s]", paste(num(v), collapse = ", ")) else num(v)
    sprintf("\"%s\": %s", n, value)
  }, "")
  sprintf("{%s}", paste(parts, collapse = ", "))
}
study_json <- function(name, formula, data, result) {
  scores <- sprintf("{\"case\": \"%s\", \"item\": \"%s\", \"rater\": \"%s\", \"score\": %s}",
                    data$case, data$item, data$rater, num(data$score))
  sprintf(paste0("  {\"name\": \"%s\", \"formula\": \"%s\",\n   \"expected\": %s,\n",
                 "   \"intervals\": %s,\n   \"reml_criterion\": %s, \"intercept\": %s,\n",
                 "   \"scores\": [\n    %s]}"),
          name, formula, json_object(result$estimates), json_object(result$intervals),
          num(result$reml_criterion), num(result$intercept),
          paste(scores, collapse = ",\n    "))
}

cases <- generate(sample(1:6, 15, replace = TRUE), 4,
                  c(case = 0.8, item = 0.6, rater = 0.5, case_rater = 0.35, residual = 0.4), 0.75)
cases_formula <- score ~ 1 + (1 | case) + (1 | item) + (1 | rater) + (1 | case:rater)
cases_fit <- fit(cases, cases_formula,
                 c(case = "case", item = "item", rater = "rater", "case:rater" = "case_by_rater"))

flat <- generate(rep(1, 60), 5,
                 c(case = 0, item = 0.9, rater = 0.5, case_rater = 0, residual = 0.5), 0.7)
flat$case <- flat$item
flat_formula <- score ~ 1 + (1 | item) + (1 | rater)
flat_fit <- fit(flat, flat_formula, c(item = "item", rater = "rater"))

cat(sprintf(paste0("{\"origin\": \"scripts/reference/calibration/make_reml_reference.R ",
                   "(seed 20261129)\",\n \"licence\": \"generated data, MIT like the repository\",\n",
                   " \"versions\": {\"R\": \"%s\", \"lme4\": \"%s\", \"nloptr\": \"%s\"},\n",
                   " \"studies\": [\n%s,\n%s]}\n"),
            paste(R.version$major, R.version$minor, sep = "."), packageVersion("lme4"),
            packageVersion("nloptr"),
            study_json("cases", deparse(cases_formula), cases, cases_fit),
            study_json("items only", deparse(flat_formula), flat, flat_fit)))
