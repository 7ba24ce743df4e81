//! Three-vectors in patient space (millimetres, DICOM's LPS axes): the few operations the
//! measurements, the structured report's geometry and the demo's synthesis share.

pub fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// `a` scaled to length 1 (`a` must not be zero).
pub fn normalise(a: [f64; 3]) -> [f64; 3] {
    let length = norm(a);
    [a[0] / length, a[1] / length, a[2] / length]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axes_obey_the_right_hand_rule_and_lengths_are_euclidean() {
        assert_eq!(cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0]);
        assert_eq!(cross([0.0, 1.0, 0.0], [1.0, 0.0, 0.0]), [0.0, 0.0, -1.0]);
        assert_eq!(dot([1.0, 2.0, 3.0], [4.0, -5.0, 6.0]), 12.0);
        assert_eq!(norm(sub([4.0, 6.0, 3.0], [1.0, 2.0, 3.0])), 5.0);
        assert_eq!(normalise([0.0, 3.0, 4.0]), [0.0, 0.6, 0.8]);
    }
}
