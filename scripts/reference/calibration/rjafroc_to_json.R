# Converts two published MRMC data sets and RJafroc's stored analyses of them into
# calibration/tests/data/mrmc_reference.json, for calibration/tests/mrmc.rs.
#
#   Rscript scripts/reference/calibration/rjafroc_to_json.R RJAFROC_CHECKOUT > calibration/tests/data/mrmc_reference.json
#
# RJAFROC_CHECKOUT is a checkout of https://github.com/dpc10ster/RJafroc (GPL-3; read here, none of
# its code is copied). Base R only (Debian's r-base-core): load() reads the .RData data sets,
# readRDS() the outputs RJafroc's own test suite stores as good values.
#
# - Van Dyke CW et al. 1993 (RJafroc `dataset02`): 2 treatments x 5 readers x 114 cases (69
#   normal, 45 abnormal), ROC ratings. Expected: RJafroc's Obuchowski-Rockette analysis with the
#   Wilcoxon FOM (`UtilOutputReport/dataset02-OR-Wilcoxon.rds`, i.e. St(dataset02, "Wilcoxon",
#   method = "OR")): FOMs, Var/Cov1/Cov2/Cov3, RRRC F, ddf (Hillis 2008), p, CI.
# - Hupse R, Karssemeijer N et al. 2013 (RJafroc `datasetCadLroc`): CAD (reader 1) and 9
#   radiologists x 200 cases (120 normal, 80 abnormal), LROC ratings. Made ROC as RJafroc's
#   DfLroc2Roc does for the Wilcoxon FOM (an abnormal case's rating = the higher of its correct-
#   and incorrect-localisation ratings). Expected: StCadVsRad(datasetCadLroc, "Wilcoxon",
#   method = "1T-RRRC") as stored in `SigTestCad/datasetCadLroc_1T-RRRC_Wilcoxon.rds`.
#   (`dataset09`, the ROC form of the same study, has no stored 1T-RRRC output.)
#
# The script recomputes each reader's Wilcoxon AUC with base R and stops unless it equals
# RJafroc's stored FOMs, so the exported ratings are the ones RJafroc analysed.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript rjafroc_to_json.R RJAFROC_CHECKOUT")
root <- args[1]
good <- file.path(root, "tests", "testthat", "goodValues361")

load(file.path(root, "data", "dataset02.RData"))
load(file.path(root, "data", "datasetCadLroc.RData"))
or02 <- readRDS(file.path(good, "UtilOutputReport", "dataset02-OR-Wilcoxon.rds"))
cad <- readRDS(file.path(good, "SigTestCad", "datasetCadLroc_1T-RRRC_Wilcoxon.rds"))

wilcoxon <- function(normal, abnormal) {
  mean(outer(abnormal, normal, function(a, n) (a > n) + 0.5 * (a == n)))
}

# ratings[t, r, ] over all cases: the K1 normal cases' NL ratings, then the K2 abnormal cases'.
roc_ratings <- function(NL, LL) {
  K2 <- dim(LL)[3]
  K1 <- dim(NL)[3] - K2
  I <- dim(NL)[1]; J <- dim(NL)[2]
  out <- array(NA_real_, dim = c(I, J, K1 + K2))
  for (i in 1:I) for (j in 1:J) out[i, j, ] <- c(NL[i, j, 1:K1, 1], LL[i, j, , 1])
  list(ratings = out, truth = c(rep(0L, K1), rep(1L, K2)))
}

check_foms <- function(r, expected, what) {
  I <- dim(r$ratings)[1]; J <- dim(r$ratings)[2]
  for (i in 1:I) for (j in 1:J) {
    x <- r$ratings[i, j, ]
    got <- wilcoxon(x[r$truth == 0], x[r$truth == 1])
    if (abs(got - expected[i, j]) > 1e-12) stop(sprintf("%s: FOM[%d,%d] %.10f != RJafroc %.10f", what, i, j, got, expected[i, j]))
  }
}

num <- function(x) sprintf("%.17g", as.numeric(x))
vec <- function(x) paste0("[", paste(num(x), collapse = ","), "]")
ints <- function(x) paste0("[", paste(as.integer(x), collapse = ","), "]")
mat <- function(m) paste0("[", paste(apply(m, 1, vec), collapse = ","), "]")

vd <- roc_ratings(dataset02$ratings$NL, dataset02$ratings$LL)
check_foms(vd, or02$FOMs$foms, "dataset02")

lroc <- datasetCadLroc$ratings
roc_ll <- lroc$LL
roc_ll[] <- pmax(lroc$LL, lroc$LL_IL)
cr <- roc_ratings(lroc$NL, roc_ll)
check_foms(cr, matrix(c(cad$fomCAD, cad$fomRAD), nrow = 1), "datasetCadLroc")

vc <- or02$ANOVA$VarCom
rrrc <- or02$RRRC
cat("{\n")
cat('  "source": "RJafroc (https://github.com/dpc10ster/RJafroc, GPL-3) data sets and its stored good values (tests/testthat/goodValues361); converted by scripts/reference/calibration/rjafroc_to_json.R",\n')
cat('  "van_dyke": {\n')
cat('    "citation": "Van Dyke CW et al. Cine MRI in the diagnosis of thoracic aortic dissection. 79th RSNA Meetings, 1993 (RJafroc dataset02)",\n')
cat('    "truth": ', ints(vd$truth), ',\n', sep = "")
cat('    "ratings": [', paste(sapply(1:2, function(i) mat(vd$ratings[i, , ])), collapse = ","), '],\n', sep = "")
cat('    "expected": {\n')
cat('      "foms": ', mat(or02$FOMs$foms), ',\n', sep = "")
cat('      "var": ', num(vc["Var", "Estimates"]), ', "cov1": ', num(vc["Cov1", "Estimates"]),
    ', "cov2": ', num(vc["Cov2", "Estimates"]), ', "cov3": ', num(vc["Cov3", "Estimates"]), ',\n', sep = "")
cat('      "var_r": ', num(vc["VarR", "Estimates"]), ', "var_tr": ', num(vc["VarTR", "Estimates"]), ',\n', sep = "")
cat('      "ms_t": ', num(or02$ANOVA$TRanova["T", "MS"]), ', "ms_tr": ', num(or02$ANOVA$TRanova["TR", "MS"]), ',\n', sep = "")
cat('      "f": ', num(rrrc$FTests["Treatment", "FStat"]), ', "ddf": ', num(rrrc$FTests["Error", "DF"]),
    ', "p": ', num(rrrc$FTests["Treatment", "p"]), ',\n', sep = "")
cat('      "difference": ', num(rrrc$ciDiffTrt$Estimate), ', "std_err": ', num(rrrc$ciDiffTrt$StdErr),
    ', "ci_low": ', num(rrrc$ciDiffTrt$CILower), ', "ci_high": ', num(rrrc$ciDiffTrt$CIUpper), '\n', sep = "")
cat('    }\n  },\n')
cat('  "cad_vs_radiologists": {\n')
cat('    "citation": "Hupse R, Samulski M, Lobbes M, et al. Standalone computer-aided detection compared to radiologists\' performance for the detection of mammographic masses. Eur Radiol 2013;23(1):93-100 (RJafroc datasetCadLroc, made ROC as RJafroc DfLroc2Roc does); analysis after Hillis 2007 / Chakraborty, StCadVsRad method 1T-RRRC",\n')
cat('    "truth": ', ints(cr$truth), ',\n', sep = "")
cat('    "cad": ', vec(cr$ratings[1, 1, ]), ',\n', sep = "")
cat('    "radiologists": ', mat(cr$ratings[1, -1, ]), ',\n', sep = "")
cat('    "expected": {\n')
cat('      "fom_cad": ', num(cad$fomCAD), ', "fom_rad": ', vec(cad$fomRAD), ',\n', sep = "")
cat('      "avg_diff_rad_minus_cad": ', num(cad$avgDiffFom), ', "ci_low": ', num(cad$CIAvgDiffFom[1]),
    ', "ci_high": ', num(cad$CIAvgDiffFom[2]), ',\n', sep = "")
cat('      "var_r": ', num(cad$varR), ', "var_error": ', num(cad$varError), ', "cov2": ', num(cad$cov2), ',\n', sep = "")
cat('      "t": ', num(cad$Tstat), ', "df": ', num(cad$df), ', "p": ', num(cad$pval), '\n', sep = "")
cat('    }\n  }\n}\n')
