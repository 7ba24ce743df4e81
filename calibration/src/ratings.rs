//! An items × raters matrix of scores with missing cells.

/// Scores of `n_items` items by `n_raters` raters, row-major; `None` where a rater did not rate.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingMatrix {
    n_items: usize,
    n_raters: usize,
    cells: Vec<Option<f64>>,
}

impl RatingMatrix {
    /// Builds a matrix from rows (one per item); rows shorter than the longest are padded with
    /// missing cells.
    pub fn from_rows(rows: &[Vec<Option<f64>>]) -> Self {
        let n_raters = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut cells = Vec::with_capacity(rows.len() * n_raters);
        for row in rows {
            cells.extend(row.iter().copied());
            cells.extend(std::iter::repeat_n(None, n_raters - row.len()));
        }
        RatingMatrix {
            n_items: rows.len(),
            n_raters,
            cells,
        }
    }

    /// Builds a matrix from complete rows.
    pub fn from_complete_rows(rows: &[Vec<f64>]) -> Self {
        let rows: Vec<Vec<Option<f64>>> = rows
            .iter()
            .map(|r| r.iter().map(|&v| Some(v)).collect())
            .collect();
        Self::from_rows(&rows)
    }

    pub fn n_items(&self) -> usize {
        self.n_items
    }

    pub fn n_raters(&self) -> usize {
        self.n_raters
    }

    pub fn row(&self, item: usize) -> &[Option<f64>] {
        &self.cells[item * self.n_raters..(item + 1) * self.n_raters]
    }

    /// Rows in which every rater scored, as plain values.
    pub fn complete_rows(&self) -> impl Iterator<Item = Vec<f64>> + '_ {
        (0..self.n_items).filter_map(|i| self.row(i).iter().copied().collect::<Option<Vec<f64>>>())
    }

    /// The non-missing scores of each item.
    pub fn present_values(&self, item: usize) -> impl Iterator<Item = f64> + '_ {
        self.row(item).iter().filter_map(|v| *v)
    }

    /// The matrix of the raters `columns` only, in that order.
    pub fn select_columns(&self, columns: &[usize]) -> RatingMatrix {
        RatingMatrix {
            n_items: self.n_items,
            n_raters: columns.len(),
            cells: (0..self.n_items)
                .flat_map(|i| columns.iter().map(move |&c| self.row(i)[c]))
                .collect(),
        }
    }

    /// The matrix of the items `rows` only, in that order (one allocation, not one per row:
    /// the report takes a subgroup's rows from the dimension's matrix for every section).
    pub fn select_rows(&self, rows: &[usize]) -> RatingMatrix {
        RatingMatrix {
            n_items: rows.len(),
            n_raters: self.n_raters,
            cells: rows
                .iter()
                .flat_map(|&i| self.row(i).iter().copied())
                .collect(),
        }
    }

    /// This matrix with one more rater, whose scores are `column` (one per item).
    pub fn with_column(&self, column: &[Option<f64>]) -> RatingMatrix {
        RatingMatrix {
            n_items: self.n_items,
            n_raters: self.n_raters + 1,
            cells: (0..self.n_items)
                .flat_map(|i| self.row(i).iter().copied().chain([column[i]]))
                .collect(),
        }
    }
}
