//! Reading as a front end offers it: a reader's queue, the blinded item, where they left off and
//! every edit of their rating, each done as the session's reader and nobody else. No operation
//! here takes a rater's id from the front end: the reader is the session's
//! ([`Session::reader`]), and an edit names only who it was made as, which must still be the
//! session's reader ([`Session::reader_as`]). So a reader cannot write as another, the study lead
//! cannot write a reader's rating, and an edit queued before the reader changed is refused with
//! [`RatingError::ReaderChanged`] instead of being written under the wrong name.
//!
//! [`Session::reader`]: super::Session::reader
//! [`Session::reader_as`]: super::Session::reader_as
//! [`RatingError::ReaderChanged`]: crate::rating::RatingError::ReaderChanged

use super::ReaderSession;
use crate::rating::{
    EditAck, LabelAck, LabelEdit, PlanSummary, QueueItem, RatingEdit, ReadingItem, ResumePoint,
};
use crate::store::Store;
use crate::Result;

/// The reader's queue on a study, in their own order.
pub fn queue(store: &Store, reader: &ReaderSession, study_id: &str) -> Result<Vec<QueueItem>> {
    store.reading_queue(reader.rater.id, study_id)
}

/// One of the reader's assignments, blinded; handing it over records that they saw it.
pub fn item(store: &mut Store, reader: &ReaderSession, assignment: i64) -> Result<ReadingItem> {
    store.reading_item(reader.rater.id, assignment)
}

/// Where the reader left off, if anywhere.
pub fn resume(store: &Store, reader: &ReaderSession) -> Result<Option<ResumePoint>> {
    store.resume(reader.rater.id)
}

/// Remembers the item the reader has open, so a restart returns to it.
pub fn set_position(store: &mut Store, reader: &ReaderSession, assignment: i64) -> Result<()> {
    store.set_position(reader.rater.id, assignment)
}

/// On the demo study, the reader's queue of every response unless they have one.
pub fn ensure_demo_queue(store: &mut Store, reader: &ReaderSession) -> Result<Option<PlanSummary>> {
    store.ensure_demo_queue(reader.rater.id)
}

pub fn save_rating(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
    edit: &RatingEdit,
) -> Result<EditAck> {
    store.save_rating(reader.rater.id, assignment, edit)
}

pub fn add_error_label(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
    label: &LabelEdit,
) -> Result<LabelAck> {
    store.add_error_label(reader.rater.id, assignment, label)
}

pub fn update_error_label(
    store: &mut Store,
    reader: &ReaderSession,
    label_id: i64,
    label: &LabelEdit,
) -> Result<EditAck> {
    store.update_error_label(reader.rater.id, label_id, label)
}

pub fn delete_error_label(
    store: &mut Store,
    reader: &ReaderSession,
    label_id: i64,
) -> Result<EditAck> {
    store.delete_error_label(reader.rater.id, label_id)
}

pub fn submit_rating(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
) -> Result<EditAck> {
    store.submit_rating(reader.rater.id, assignment)
}

pub fn reopen_rating(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
) -> Result<EditAck> {
    store.reopen_rating(reader.rater.id, assignment)
}

/// Settles the reader's item whose edits the team server refused as a conflict against
/// `server`, the server's current rating of it: the rating becomes the server's, or the
/// reader's is sent over it (`rating::outbox::resolve`).
pub fn resolve_conflict(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
    resolution: crate::rating::outbox::Resolution,
    server: &crate::app::team::TeamRating,
    ground_truth_version: Option<i64>,
) -> Result<()> {
    crate::rating::outbox::resolve(
        store,
        reader.rater.id,
        assignment,
        resolution,
        server,
        ground_truth_version,
    )
}
