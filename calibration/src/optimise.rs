//! Nelder–Mead minimisation without derivatives, for the few smooth parameters of a likelihood
//! (the REML variance components): no gradient to derive and no bound to handle, since those
//! criteria are even in each parameter (a standard deviation enters only squared or as |θ|).

/// Where a minimisation stopped.
pub(crate) struct Minimum {
    pub point: Vec<f64>,
    pub value: f64,
}

/// Minimises `f` from `start`, restarting from the best point with a fresh simplex until a
/// restart no longer improves on it (a single Nelder–Mead run can stall on a ridge), or until
/// `max_evaluations` in all. Stops a run when the simplex's values lie within `tolerance` of its
/// best (absolute); a run stopped early on a flat stretch is what the restart catches.
pub(crate) fn minimise(
    f: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: f64,
    tolerance: f64,
    max_evaluations: usize,
) -> Minimum {
    let mut best = Minimum {
        value: f(start),
        point: start.to_vec(),
    };
    let mut evaluations = 1;
    let mut step = step;
    while evaluations < max_evaluations {
        let (run, used) = run(
            f,
            &best.point,
            step,
            tolerance,
            max_evaluations - evaluations,
        );
        evaluations += used;
        let improved = run.value < best.value - tolerance;
        if run.value < best.value {
            best = run;
        }
        if !improved {
            break;
        }
        step = (step / 4.0).max(1e3 * tolerance);
    }
    best
}

fn run(
    f: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: f64,
    tolerance: f64,
    budget: usize,
) -> (Minimum, usize) {
    let n = start.len();
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    simplex.push((start.to_vec(), f(start)));
    for j in 0..n {
        let mut x = start.to_vec();
        x[j] += if x[j].abs() > step {
            step * x[j].signum()
        } else {
            step
        };
        let v = f(&x);
        simplex.push((x, v));
    }
    let mut used = n + 1;
    let value = |x: &[f64], f: &mut dyn FnMut(&[f64]) -> f64, used: &mut usize| {
        *used += 1;
        let v = f(x);
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    };
    while used < budget {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if worst - best <= tolerance {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|(x, _)| x[j]).sum::<f64>() / n as f64)
            .collect();
        let toward = |t: f64, worst: &[f64]| -> Vec<f64> {
            centroid
                .iter()
                .zip(worst)
                .map(|(c, w)| c + t * (w - c))
                .collect()
        };
        let reflected = toward(-1.0, &simplex[n].0);
        let reflected_value = value(&reflected, f, &mut used);
        if reflected_value < best {
            let expanded = toward(-2.0, &simplex[n].0);
            let expanded_value = value(&expanded, f, &mut used);
            simplex[n] = if expanded_value < reflected_value {
                (expanded, expanded_value)
            } else {
                (reflected, reflected_value)
            };
        } else if reflected_value < simplex[n - 1].1 {
            simplex[n] = (reflected, reflected_value);
        } else {
            let t = if reflected_value < worst { -0.5 } else { 0.5 };
            let contracted = toward(t, &simplex[n].0);
            let contracted_value = value(&contracted, f, &mut used);
            if contracted_value < worst.min(reflected_value) {
                simplex[n] = (contracted, contracted_value);
            } else {
                let lowest = simplex[0].0.clone();
                for (x, v) in simplex.iter_mut().skip(1) {
                    for (xj, lj) in x.iter_mut().zip(&lowest) {
                        *xj = lj + 0.5 * (*xj - lj);
                    }
                    *v = value(x, f, &mut used);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (point, value) = simplex.swap_remove(0);
    (Minimum { point, value }, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_rosenbrocks_valley() {
        let mut f = |x: &[f64]| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
        let m = minimise(&mut f, &[-1.2, 1.0], 0.5, 1e-12, 20_000);
        assert!((m.point[0] - 1.0).abs() < 1e-5 && (m.point[1] - 1.0).abs() < 1e-5);
    }
}
