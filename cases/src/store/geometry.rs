//! Each series' geometry (grid and voxel → patient LPS mm), kept in `series_geometry` so that
//! lesion marks, key-image slices and missed findings are checked without decoding the series.
//!
//! Import writes it from the headers the bundle's validation already read
//! (`bundle::BundleCase::geometry`), in the import's transaction. A database imported by an
//! earlier build has no rows: the build that adds the table fills them when it first opens the
//! database ([`backfill`]), reading each series' headers after verifying its files; a series whose
//! files cannot be read then is left without a row, and [`Store::series_geometry`] reads it from
//! its files on each use, with the error naming the file when they are gone.

use super::{audit, SeriesFiles, Store};
use crate::model::SeriesKind;
use crate::{Error, Result};
use imaging::SeriesGeometry;
use rusqlite::{params, OptionalExtension, Transaction};

/// The first schema version that has `series_geometry`: found by content, so that appending or
/// renumbering migrations around it cannot make this point at another one.
pub(super) fn since_version() -> i64 {
    super::migrations::MIGRATIONS
        .iter()
        .position(|sql| sql.contains("CREATE TABLE series_geometry"))
        .map_or(i64::MAX, |index| index as i64 + 1)
}

/// The affine's first three rows, row by row, as little-endian f64: exact, unlike decimal text.
fn affine_blob(voxel_to_patient: &[[f64; 4]; 4]) -> Vec<u8> {
    voxel_to_patient[..3]
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

fn affine_of_blob(blob: &[u8]) -> Option<[[f64; 4]; 4]> {
    if blob.len() != 96 {
        return None;
    }
    let mut affine = [
        [0.0, 0.0, 0.0, 0.0],
        [0.0; 4],
        [0.0; 4],
        [0.0, 0.0, 0.0, 1.0],
    ];
    for (index, bytes) in blob.chunks_exact(8).enumerate() {
        affine[index / 4][index % 4] = f64::from_le_bytes(bytes.try_into().ok()?);
    }
    Some(affine)
}

/// Stores (or replaces) `series`' geometry in the caller's transaction.
pub(crate) fn write(
    tx: &Transaction<'_>,
    series: i64,
    geometry: &SeriesGeometry,
) -> rusqlite::Result<()> {
    let [columns, rows, slices] = geometry.dims.map(|n| n as i64);
    tx.execute(
        "INSERT INTO series_geometry (series, columns, rows, slices, voxel_to_patient)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (series) DO UPDATE SET columns = excluded.columns, rows = excluded.rows,
            slices = excluded.slices, voxel_to_patient = excluded.voxel_to_patient",
        params![
            series,
            columns,
            rows,
            slices,
            affine_blob(&geometry.voxel_to_patient)
        ],
    )?;
    Ok(())
}

/// The geometry of a series' files from their headers alone, after verifying them against their
/// import hashes (a changed image is an error naming it).
pub fn geometry_from_files(files: &SeriesFiles) -> Result<SeriesGeometry> {
    files.verify()?;
    let paths = files.paths();
    let geometry = match files.kind {
        SeriesKind::Dicom => {
            let metas = paths
                .iter()
                .map(|path| imaging::read_dicom_meta(path))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            imaging::dicom_series_geometry(&metas)
        }
        SeriesKind::Nifti => match paths.as_slice() {
            [path] => Some(imaging::nifti_geometry(path)?),
            _ => None,
        },
        SeriesKind::KeyImages => Some(imaging::key_images_geometry(&paths)?),
    };
    geometry.ok_or_else(|| Error::Corrupt {
        what: format!(
            "series {} lists {} file(s), which make no volume",
            files.label,
            paths.len()
        ),
    })
}

impl Store {
    /// A series' geometry: as stored at import, else (a series imported by an earlier build whose
    /// files could not be read when this build first opened the database) from its files.
    pub fn series_geometry(&self, series: i64) -> Result<SeriesGeometry> {
        let row: Option<(i64, i64, i64, Vec<u8>)> = self
            .read()
            .query_row(
                "SELECT columns, rows, slices, voxel_to_patient FROM series_geometry
                 WHERE series = ?1",
                [series],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .optional()
            .map_err(|e| Error::database(self.path(), "reading a series' geometry", e))?;
        let Some((columns, rows, slices, blob)) = row else {
            return geometry_from_files(&self.series_files(series)?);
        };
        let affine = affine_of_blob(&blob).ok_or_else(|| Error::Corrupt {
            what: format!(
                "the stored geometry of series {series} is {} bytes, not 96",
                blob.len()
            ),
        })?;
        let dim = |n: i64| {
            usize::try_from(n).map_err(|_| Error::Corrupt {
                what: format!("the stored geometry of series {series} has a negative size {n}"),
            })
        };
        Ok(SeriesGeometry {
            dims: [dim(columns)?, dim(rows)?, dim(slices)?],
            voxel_to_patient: affine,
        })
    }
}

/// Fills `series_geometry` for every series without a row, from its verified files' headers, in
/// one audited write; a series whose files cannot be read is skipped (see the module's note).
/// Returns how many series were filled.
pub(super) fn backfill(store: &mut Store) -> Result<usize> {
    let missing: Vec<i64> = store
        .read()
        .prepare(
            "SELECT s.id FROM series s
             WHERE NOT EXISTS (SELECT 1 FROM series_geometry g WHERE g.series = s.id)
             ORDER BY s.id",
        )
        .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect())
        .map_err(|e| Error::database(store.path(), "listing series without geometry", e))?;
    if missing.is_empty() {
        return Ok(0);
    }
    let read: Vec<(i64, SeriesGeometry)> = missing
        .into_iter()
        .filter_map(|series| {
            let files = store.series_files(series).ok()?;
            Some((series, geometry_from_files(&files).ok()?))
        })
        .collect();
    if read.is_empty() {
        return Ok(0);
    }
    store.write(|w| {
        for (series, geometry) in &read {
            write(w.tx(), *series, geometry)
                .map_err(|e| w.fail("storing a series' geometry", e))?;
        }
        w.audit(&audit::Entry {
            actor: "neurorater",
            action: "store series geometry",
            entity: "series_geometry",
            before: None,
            after: Some(&serde_json::json!({ "series": read.len() })),
        })?;
        Ok(read.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_affine_survives_its_blob_to_the_bit() {
        let affine = [
            [-0.449_218_75, 1e-17, 0.1, 114.775_390_625],
            [0.0, -0.449_218_75, -1.0 / 3.0, 117.0],
            [f64::MIN_POSITIVE, 0.0, 5.000_000_000_000_001, -72.3],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let blob = affine_blob(&affine);
        assert_eq!(blob.len(), 96);
        let back = affine_of_blob(&blob).expect("96 bytes");
        for (row, back_row) in affine.iter().zip(&back) {
            for (v, b) in row.iter().zip(back_row) {
                assert_eq!(v.to_bits(), b.to_bits());
            }
        }
        assert_eq!(affine_of_blob(&blob[..95]), None);
    }
}
