//! Schema migrations, tracked in `PRAGMA user_version`.
//!
//! **Invariant:** a released migration is never edited; changes go into a new entry appended to
//! [`MIGRATIONS`]. Each migration runs in the same transaction as the `user_version` bump, so a
//! database is always at exactly one version.

use rusqlite::Connection;

/// Migration `i` takes the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: the study, its cases and images, responses, grader scores, ratings and the audit log.
    r#"
CREATE TABLE studies (
    id            INTEGER PRIMARY KEY,
    study_id      TEXT NOT NULL UNIQUE,
    title         TEXT NOT NULL,
    description   TEXT NOT NULL,
    rubric_json   TEXT NOT NULL,
    taxonomy_json TEXT NOT NULL,
    -- Absolute path of the bundle the images are referenced from (never copied).
    bundle_dir    TEXT NOT NULL
) STRICT;

CREATE TABLE cases (
    id            INTEGER PRIMARY KEY,
    study         INTEGER NOT NULL REFERENCES studies(id),
    case_id       TEXT NOT NULL,
    disease_group TEXT NOT NULL CHECK (disease_group IN
        ('multiple_sclerosis', 'stroke', 'tumour', 'other_abnormality', 'normal')),
    modality      TEXT NOT NULL CHECK (modality IN ('MR', 'CT')),
    age           INTEGER NOT NULL CHECK (age BETWEEN 0 AND 130),
    sex           TEXT NOT NULL CHECK (sex IN ('F', 'M', 'O')),
    ehr_json      TEXT NOT NULL,
    clinical_note TEXT NOT NULL,
    UNIQUE (study, case_id)
) STRICT;

CREATE TABLE series (
    id        INTEGER PRIMARY KEY,
    case_ref  INTEGER NOT NULL REFERENCES cases(id),
    series_id TEXT NOT NULL,
    label     TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('dicom', 'nifti', 'key_images')),
    -- Relative to the study's bundle_dir.
    path      TEXT NOT NULL,
    UNIQUE (case_ref, series_id)
) STRICT;

-- One row per file, in display order. UIDs are opaque keys and never shown.
CREATE TABLE images (
    id               INTEGER PRIMARY KEY,
    series           INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    path             TEXT NOT NULL,
    sha256           TEXT NOT NULL,
    byte_len         INTEGER NOT NULL,
    sop_instance_uid TEXT,
    UNIQUE (series, position)
) STRICT;

CREATE TABLE tasks (
    id              INTEGER PRIMARY KEY,
    case_ref        INTEGER NOT NULL REFERENCES cases(id),
    task_id         TEXT NOT NULL,
    family          TEXT NOT NULL CHECK (family IN
        ('differential_diagnosis', 'lesion_identification', 'rationale_generation')),
    level           INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
    prompt          TEXT NOT NULL,
    key_images_json TEXT NOT NULL,
    UNIQUE (case_ref, task_id)
) STRICT;

CREATE TABLE responses (
    id         INTEGER PRIMARY KEY,
    task       INTEGER NOT NULL REFERENCES tasks(id),
    model      TEXT NOT NULL,
    sample     INTEGER NOT NULL CHECK (sample >= 0),
    answer     TEXT NOT NULL,
    rationale  TEXT,
    turns_json TEXT,
    extra_json TEXT NOT NULL,
    UNIQUE (task, model, sample)
) STRICT;

CREATE TABLE grader_scores (
    id              INTEGER PRIMARY KEY,
    response        INTEGER NOT NULL REFERENCES responses(id),
    grader          TEXT NOT NULL,
    score           REAL NOT NULL,
    dimensions_json TEXT,
    errors_json     TEXT,
    rationale       TEXT,
    extra_json      TEXT NOT NULL,
    UNIQUE (response, grader)
) STRICT;

CREATE TABLE raters (
    id               INTEGER PRIMARY KEY,
    name             TEXT NOT NULL UNIQUE,
    role             TEXT NOT NULL CHECK (role IN
        ('neuroradiologist', 'neurologist', 'resident', 'curator')),
    years_experience INTEGER CHECK (years_experience >= 0)
) STRICT;

CREATE TABLE ratings (
    id               INTEGER PRIMARY KEY,
    response         INTEGER NOT NULL REFERENCES responses(id),
    rater            INTEGER NOT NULL REFERENCES raters(id),
    overall          REAL,
    dimensions_json  TEXT NOT NULL DEFAULT '{}',
    correctness      TEXT CHECK (correctness IN ('correct', 'partly', 'incorrect')),
    confidence       INTEGER CHECK (confidence BETWEEN 1 AND 5),
    comment          TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted')),
    seconds_on_task  REAL NOT NULL DEFAULT 0,
    updated_at       TEXT NOT NULL,
    UNIQUE (response, rater)
) STRICT;

CREATE TABLE error_labels (
    id         INTEGER PRIMARY KEY,
    rating     INTEGER NOT NULL REFERENCES ratings(id) ON DELETE CASCADE,
    category   TEXT NOT NULL,
    severity   INTEGER NOT NULL CHECK (severity BETWEEN 1 AND 3),
    span_start INTEGER,
    span_end   INTEGER,
    mark_json  TEXT,
    comment    TEXT NOT NULL DEFAULT '',
    CHECK ((span_start IS NULL) = (span_end IS NULL)),
    CHECK (span_start IS NOT NULL OR mark_json IS NOT NULL)
) STRICT;

CREATE TABLE ground_truth (
    case_ref   INTEGER PRIMARY KEY REFERENCES cases(id),
    body_json  TEXT NOT NULL,
    source     TEXT NOT NULL
) STRICT;

-- Append-only; each entry's hash covers the previous entry's hash, so an edit anywhere shows.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    entity      TEXT NOT NULL,
    before_json TEXT,
    after_json  TEXT,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL
) STRICT;

CREATE TRIGGER audit_log_is_append_only_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_is_append_only_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

CREATE INDEX responses_by_task ON responses(task);
CREATE INDEX grader_scores_by_response ON grader_scores(response);
CREATE INDEX ratings_by_rater ON ratings(rater);
CREATE INDEX error_labels_by_rating ON error_labels(rating);
"#,
    // 2: reading assignments, repeat reads (a rating belongs to one read of a response by a rater),
    // where each rater left off, and the app's own settings.
    r#"
CREATE TABLE assignment_plans (
    id                INTEGER PRIMARY KEY,
    study             INTEGER NOT NULL REFERENCES studies(id),
    name              TEXT NOT NULL,
    -- The order of every rater's queue is reproducible from this seed.
    seed              INTEGER NOT NULL,
    overlap_share     REAL NOT NULL CHECK (overlap_share BETWEEN 0 AND 1),
    repeat_share      REAL NOT NULL CHECK (repeat_share BETWEEN 0 AND 1),
    repeat_after_days INTEGER NOT NULL CHECK (repeat_after_days >= 0),
    created_by        INTEGER NOT NULL REFERENCES raters(id),
    created_at        TEXT NOT NULL,
    UNIQUE (study, name)
) STRICT;

CREATE TABLE assignments (
    id         INTEGER PRIMARY KEY,
    plan       INTEGER NOT NULL REFERENCES assignment_plans(id),
    rater      INTEGER NOT NULL REFERENCES raters(id),
    response   INTEGER NOT NULL REFERENCES responses(id),
    -- 1 for the first read; 2 for a repeat read of the same response (intra-rater reliability).
    read_no    INTEGER NOT NULL DEFAULT 1 CHECK (read_no >= 1),
    -- 1-based place in this rater's seeded order within the plan.
    position   INTEGER NOT NULL CHECK (position >= 1),
    -- Read by every rater of the plan (inter-rater agreement).
    overlap    INTEGER NOT NULL CHECK (overlap IN (0, 1)),
    -- A repeat read opens only from this date (YYYY-MM-DD); NULL: open now.
    not_before TEXT,
    UNIQUE (plan, rater, position),
    UNIQUE (rater, response, read_no)
) STRICT;
CREATE INDEX assignments_by_rater ON assignments(rater, plan, position);

CREATE TABLE ratings_v2 (
    id               INTEGER PRIMARY KEY,
    response         INTEGER NOT NULL REFERENCES responses(id),
    rater            INTEGER NOT NULL REFERENCES raters(id),
    read_no          INTEGER NOT NULL DEFAULT 1 CHECK (read_no >= 1),
    overall          REAL,
    dimensions_json  TEXT NOT NULL DEFAULT '{}',
    correctness      TEXT CHECK (correctness IN ('correct', 'partly', 'incorrect')),
    confidence       INTEGER CHECK (confidence BETWEEN 1 AND 5),
    comment          TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted')),
    seconds_on_task  REAL NOT NULL DEFAULT 0,
    updated_at       TEXT NOT NULL,
    submitted_at     TEXT,
    UNIQUE (response, rater, read_no)
) STRICT;
INSERT INTO ratings_v2 (id, response, rater, overall, dimensions_json, correctness, confidence,
                        comment, status, seconds_on_task, updated_at)
    SELECT id, response, rater, overall, dimensions_json, correctness, confidence, comment, status,
           seconds_on_task, updated_at FROM ratings;
DROP TABLE ratings;
ALTER TABLE ratings_v2 RENAME TO ratings;
CREATE INDEX ratings_by_rater ON ratings(rater);

-- Where each rater left off, so a restart brings them back to the same response.
CREATE TABLE rater_positions (
    rater      INTEGER PRIMARY KEY REFERENCES raters(id),
    assignment INTEGER REFERENCES assignments(id),
    updated_at TEXT NOT NULL
) STRICT;

-- Small app-wide settings (the current rater, the display convention), as text.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
"#,
    // 3: curated ground truth in versions with reviews, and human-baseline answers. The
    // `ground_truth` table stays the case's current ground truth (the bundle's, or the last
    // version a reviewer finalised), so exports and re-imports keep their meaning.
    r#"
CREATE TABLE ground_truth_versions (
    id           INTEGER PRIMARY KEY,
    case_ref     INTEGER NOT NULL REFERENCES cases(id),
    -- Counts per case from 1 across branches, so a version number names one version.
    version      INTEGER NOT NULL CHECK (version >= 1),
    -- 'main', or the name of an independent curation to be compared and merged.
    branch       TEXT NOT NULL,
    -- The version this one was edited from; NULL for the first of a branch.
    based_on     INTEGER,
    status       TEXT NOT NULL CHECK (status IN ('draft', 'in_review', 'final')),
    source       TEXT NOT NULL CHECK (source IN ('bundle', 'curator', 'consensus', 'import')),
    -- The curator; NULL when the version came from a bundle or an import.
    author       INTEGER REFERENCES raters(id),
    body_json    TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    -- When and by whom the status last changed (submitted, sent back, finalised).
    status_by    INTEGER REFERENCES raters(id),
    status_at    TEXT,
    UNIQUE (case_ref, version)
) STRICT;
CREATE INDEX ground_truth_versions_by_branch ON ground_truth_versions(case_ref, branch, version);

CREATE TABLE ground_truth_reviews (
    id        INTEGER PRIMARY KEY,
    version   INTEGER NOT NULL REFERENCES ground_truth_versions(id),
    reviewer  INTEGER NOT NULL REFERENCES raters(id),
    decision  TEXT NOT NULL CHECK (decision IN
        ('submitted', 'comment', 'changes_requested', 'finalised')),
    comment   TEXT NOT NULL,
    at        TEXT NOT NULL
) STRICT;
CREATE INDEX ground_truth_reviews_by_version ON ground_truth_reviews(version);

-- Who answered: a model, or a clinician answering blind (human baseline). Existing rows are
-- models' answers.
ALTER TABLE responses ADD COLUMN respondent_kind TEXT NOT NULL DEFAULT 'model'
    CHECK (respondent_kind IN ('model', 'human'));

-- The clinician behind a human-baseline response, with their role and experience at the time.
CREATE TABLE human_answers (
    response          INTEGER PRIMARY KEY REFERENCES responses(id),
    task              INTEGER NOT NULL REFERENCES tasks(id),
    rater             INTEGER NOT NULL REFERENCES raters(id),
    role              TEXT NOT NULL CHECK (role IN
        ('medical_student', 'resident', 'neurologist', 'neuroradiologist')),
    years_experience  INTEGER CHECK (years_experience >= 0),
    diagnosis         TEXT NOT NULL,
    differential_json TEXT NOT NULL,
    reasoning         TEXT NOT NULL,
    seconds_on_task   REAL NOT NULL CHECK (seconds_on_task >= 0),
    answered_at       TEXT NOT NULL,
    UNIQUE (rater, task)
) STRICT;
"#,
    // 4: multi-site rater packages (cases::package). A package is known on both sides by its UUID:
    // the lead's database records what it exported, the remote rater's what it imported; each
    // item of a package is one assignment, so a results package names items, never local ids.
    // `merged_ratings` remembers what a merge wrote, so a later package may update a rating that
    // nobody at the lead's site has edited since, and anything else is a conflict.
    r#"
CREATE TABLE rater_packages (
    id           INTEGER PRIMARY KEY,
    package_id   TEXT NOT NULL UNIQUE,
    direction    TEXT NOT NULL CHECK (direction IN ('exported', 'imported')),
    study        INTEGER NOT NULL REFERENCES studies(id),
    rater        INTEGER NOT NULL REFERENCES raters(id),
    site         TEXT NOT NULL,
    -- The lead's study content when the package was built (responses, rubric, taxonomy).
    study_sha256 TEXT NOT NULL,
    created_at   TEXT NOT NULL
) STRICT;

CREATE TABLE rater_package_items (
    package    INTEGER NOT NULL REFERENCES rater_packages(id),
    item       INTEGER NOT NULL CHECK (item >= 1),
    assignment INTEGER NOT NULL REFERENCES assignments(id),
    PRIMARY KEY (package, item),
    UNIQUE (package, assignment)
) STRICT;

CREATE TABLE merged_ratings (
    rating            INTEGER PRIMARY KEY REFERENCES ratings(id),
    results_package   TEXT NOT NULL,
    -- The rating's content (scores, labels, status) as the merge wrote it.
    content_sha256    TEXT NOT NULL,
    remote_updated_at TEXT NOT NULL
) STRICT;
"#,
    // 5: runs of models and graders from NeuroRater itself (the `runner` crate). Their scores and
    // responses go into `grader_scores` and `responses` like imported ones; this holds what an
    // import does not know. A name is bound to its spec's content hash by its first run, for good.
    r#"
CREATE TABLE run_specs (
    name         TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('grader', 'model')),
    spec_sha256  TEXT NOT NULL,
    -- The spec as parsed (the API key's variable name at most, never the key).
    spec_json    TEXT NOT NULL,
    first_run_at TEXT NOT NULL
) STRICT;

-- One row per result a run stored: exactly one of grader_score and response is set.
CREATE TABLE run_results (
    id                INTEGER PRIMARY KEY,
    spec_name         TEXT NOT NULL REFERENCES run_specs(name),
    grader_score      INTEGER UNIQUE REFERENCES grader_scores(id),
    response          INTEGER UNIQUE REFERENCES responses(id),
    spec_sha256       TEXT NOT NULL,
    seed              INTEGER NOT NULL,
    temperature       REAL NOT NULL,
    -- Every reply body of the item's conversation, in order (re-asks and follow-ups included).
    raw_replies_json  TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
    latency_ms        INTEGER NOT NULL CHECK (latency_ms >= 0),
    requests          INTEGER NOT NULL CHECK (requests >= 1),
    at                TEXT NOT NULL,
    CHECK ((grader_score IS NULL) <> (response IS NULL))
) STRICT;
CREATE INDEX run_results_by_spec ON run_results(spec_name);

-- A level-3 task's follow-up script (the bundle's `follow_up`), as a JSON array of strings.
ALTER TABLE tasks ADD COLUMN follow_up_json TEXT NOT NULL DEFAULT '[]';

-- Blinding asks the audit log what a rater was shown (`show item` per assignment) each time an
-- item opens; without an index that is a scan of a log that only grows.
CREATE INDEX audit_log_by_action_entity ON audit_log(action, entity);
"#,
    // 6: the grader workbench (cases::grader_workbench). The development/test split of a study's
    // clinician-rated items, fixed by its seed; an item once placed keeps its part. A version
    // confirmed on the test items is recorded here and in the audit log.
    r#"
CREATE TABLE grader_splits (
    study      INTEGER PRIMARY KEY REFERENCES studies(id),
    seed       INTEGER NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE grader_split_items (
    response INTEGER PRIMARY KEY REFERENCES responses(id),
    part     TEXT NOT NULL CHECK (part IN ('development', 'test'))
) STRICT;

CREATE TABLE grader_confirmations (
    id           INTEGER PRIMARY KEY,
    study        INTEGER NOT NULL REFERENCES studies(id),
    grader       TEXT NOT NULL,
    confirmed_by TEXT NOT NULL,
    at           TEXT NOT NULL,
    UNIQUE (study, grader)
) STRICT;
"#,
    // 7: what a curator still has to complete in a case (the bundle's `to_complete`, written by
    // `neurorater scaffold`), as a JSON array of its values; the app lists such cases.
    r#"
ALTER TABLE cases ADD COLUMN to_complete_json TEXT NOT NULL DEFAULT '[]';
"#,
    // 8: automatic text metrics (the `textmetrics` crate, `neurorater metrics`). Sentence
    // embeddings are cached by the text's SHA-256 and the model's identity; each response's
    // metrics against its case's expected reasoning carry both texts' hashes, so an edited
    // rationale or a new ground truth is computed again and nothing else is. Token embeddings
    // (BERTScore's input, ~150 kB a text) are not kept: the scores they give are.
    r#"
CREATE TABLE text_embeddings (
    model       TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    tokens      INTEGER NOT NULL CHECK (tokens >= 0),
    -- The L2-normalised sentence embedding as little-endian f32.
    embedding   BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) STRICT;

CREATE TABLE text_metrics (
    response            INTEGER NOT NULL REFERENCES responses(id),
    model               TEXT NOT NULL,
    rationale_sha256    TEXT NOT NULL,
    reference_sha256    TEXT NOT NULL,
    cosine              REAL NOT NULL,
    bertscore_precision REAL NOT NULL,
    bertscore_recall    REAL NOT NULL,
    bertscore_f1        REAL NOT NULL,
    rouge_l_precision   REAL NOT NULL,
    rouge_l_recall      REAL NOT NULL,
    rouge_l_f           REAL NOT NULL,
    computed_at         TEXT NOT NULL,
    PRIMARY KEY (response, model)
) STRICT;
"#,
    // 9: a secret per study, from which the pseudonymous case codes a blinded reader sees are
    // derived (`cases::app::catalog`): stable for the study, and revealing neither the case id
    // (the demo's `ms-01` names the diagnosis) nor anything without the secret. Made by a trigger
    // with the study itself, so no path that creates a study (bundle import, rater package) can
    // forget it.
    r#"
CREATE TABLE study_secrets (
    study INTEGER PRIMARY KEY REFERENCES studies(id),
    salt  BLOB NOT NULL CHECK (length(salt) = 32)
) STRICT;
INSERT INTO study_secrets (study, salt) SELECT id, randomblob(32) FROM studies;
CREATE TRIGGER study_secret_with_study AFTER INSERT ON studies BEGIN
    INSERT INTO study_secrets (study, salt) VALUES (NEW.id, randomblob(32));
END;
"#,
    // 10: each series' geometry, read from its headers at import (`store/geometry.rs`), so that
    // lesion marks, key-image slices and missed findings are checked without decoding the series
    // again (issue 18: at a study's size that decoding was most of the calibration report's read).
    // Series imported before are filled when this build first opens the database (backfill).
    r#"
CREATE TABLE series_geometry (
    series           INTEGER PRIMARY KEY REFERENCES series(id) ON DELETE CASCADE,
    columns          INTEGER NOT NULL CHECK (columns >= 0),
    rows             INTEGER NOT NULL CHECK (rows >= 0),
    slices           INTEGER NOT NULL CHECK (slices >= 0),
    -- Voxel (column, row, slice, 1) to patient LPS mm: the affine's first three rows, row by
    -- row, as 12 little-endian f64 (exact; the fourth row is 0 0 0 1).
    voxel_to_patient BLOB NOT NULL CHECK (length(voxel_to_patient) = 96)
) STRICT;
"#,
    // 11: an error label's span says which text it lies in (issue 17): the answer, the rationale,
    // or one turn of a consultation by its index in the response's `turns`. Labels made before
    // lie in the rationale. SQLite cannot add a table constraint, so the table is rebuilt with
    // the same rows; nothing references `error_labels`.
    r#"
CREATE TABLE error_labels_by_text (
    id         INTEGER PRIMARY KEY,
    rating     INTEGER NOT NULL REFERENCES ratings(id) ON DELETE CASCADE,
    category   TEXT NOT NULL,
    severity   INTEGER NOT NULL CHECK (severity BETWEEN 1 AND 3),
    span_start INTEGER,
    span_end   INTEGER,
    span_text  TEXT CHECK (span_text IN ('answer', 'rationale', 'turn')),
    span_turn  INTEGER CHECK (span_turn >= 0),
    mark_json  TEXT,
    comment    TEXT NOT NULL DEFAULT '',
    CHECK ((span_start IS NULL) = (span_end IS NULL)),
    CHECK ((span_start IS NULL) = (span_text IS NULL)),
    CHECK ((span_text IS 'turn') = (span_turn IS NOT NULL)),
    CHECK (span_start IS NOT NULL OR mark_json IS NOT NULL)
) STRICT;
INSERT INTO error_labels_by_text
    (id, rating, category, severity, span_start, span_end, span_text, mark_json, comment)
    SELECT id, rating, category, severity, span_start, span_end,
           CASE WHEN span_start IS NULL THEN NULL ELSE 'rationale' END, mark_json, comment
    FROM error_labels;
DROP TABLE error_labels;
ALTER TABLE error_labels_by_text RENAME TO error_labels;
CREATE INDEX error_labels_by_rating ON error_labels(rating);
"#,
    // 12: a rating may mark a rubric dimension "not applicable" where the rubric allows it
    // (issue 17): the dimensions so marked, as a JSON array of ids, kept apart from the scores
    // so that no number stands for "not applicable". Ratings made before marked none.
    r#"
ALTER TABLE ratings ADD COLUMN not_applicable_json TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(not_applicable_json) = 'array');
"#,
    // 13: plans topped up while a study runs (issues 16, 17). A plan keeps its cap and strata for
    // its top-ups, each rater's seat (their stream: raters joining later take the next seats),
    // and the responses it has dealt, so a top-up deals only responses added since (a response
    // the cap left unassigned stays dealt, not new). Plans made before: seats in the order their
    // raters' first assignments were written (the spec's order), dealt responses those assigned
    // (a capped plan's leftovers count as new at its first top-up), no cap or strata recorded.
    r#"
ALTER TABLE assignment_plans ADD COLUMN responses_per_rater INTEGER
    CHECK (responses_per_rater >= 1);
ALTER TABLE assignment_plans ADD COLUMN stratify_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE assignment_plans ADD COLUMN top_ups INTEGER NOT NULL DEFAULT 0 CHECK (top_ups >= 0);
CREATE TABLE plan_raters (
    plan  INTEGER NOT NULL REFERENCES assignment_plans(id),
    rater INTEGER NOT NULL REFERENCES raters(id),
    seat  INTEGER NOT NULL CHECK (seat >= 1),
    PRIMARY KEY (plan, rater),
    UNIQUE (plan, seat)
) STRICT;
CREATE TABLE plan_responses (
    plan     INTEGER NOT NULL REFERENCES assignment_plans(id),
    response INTEGER NOT NULL REFERENCES responses(id),
    PRIMARY KEY (plan, response)
) STRICT;
INSERT INTO plan_raters (plan, rater, seat)
    SELECT plan, rater, row_number() OVER (PARTITION BY plan ORDER BY min(id))
    FROM assignments GROUP BY plan, rater;
INSERT INTO plan_responses (plan, response) SELECT DISTINCT plan, response FROM assignments;
"#,
    // 14: rubric versions (issue 17). The lead edits a study's rubric in place until a rating is
    // made under it; after that a change is a new version (`crate::rubric`). Every version's
    // rubric is kept; `studies.rubric_json` stays the current one (its many readers unchanged)
    // and `studies.rubric_version` its number. A rating records the version it was last saved
    // under. Studies and ratings from before: version 1, the rubric they hold.
    r#"
ALTER TABLE studies ADD COLUMN rubric_version INTEGER NOT NULL DEFAULT 1
    CHECK (rubric_version >= 1);
ALTER TABLE ratings ADD COLUMN rubric_version INTEGER NOT NULL DEFAULT 1
    CHECK (rubric_version >= 1);
CREATE TABLE rubric_versions (
    study       INTEGER NOT NULL REFERENCES studies(id),
    version     INTEGER NOT NULL CHECK (version >= 1),
    rubric_json TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (study, version)
) STRICT;
INSERT INTO rubric_versions (study, version, rubric_json, created_at)
    SELECT id, 1, rubric_json, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM studies;
"#,
    // 15: rater packages the team server builds (issue 16). Each item names the server's id of
    // its assignment, so the rater's edits of an item imported here can be sent to the server
    // (`cases::package::server_link`). Packages a local lead built, and those imported before,
    // name none.
    r#"
ALTER TABLE rater_package_items ADD COLUMN server_assignment INTEGER
    CHECK (server_assignment >= 1);
CREATE INDEX rater_package_items_by_assignment ON rater_package_items(assignment);
CREATE UNIQUE INDEX rater_package_items_by_server_assignment
    ON rater_package_items(package, server_assignment) WHERE server_assignment IS NOT NULL;
"#,
    // 16: the team server's outbox (issue 16, `cases::rating::outbox`). Every local edit of an
    // assignment that came from a package the server built is queued here in the edit's own
    // transaction, in local order (`id`), with its own edit id (a resend is stored once by the
    // server) and the edit as the server takes it. An acknowledged row keeps its server version
    // and time, for audit; a refused one (`stopped`: someone else's newer version) holds its
    // assignment's queue, the local rating untouched.
    r#"
CREATE TABLE team_outbox (
    id                INTEGER PRIMARY KEY,
    assignment        INTEGER NOT NULL REFERENCES assignments(id),
    study_id          TEXT NOT NULL,
    server_assignment INTEGER NOT NULL CHECK (server_assignment >= 1),
    edit_id           TEXT NOT NULL UNIQUE,
    edit_json         TEXT NOT NULL,
    queued_at         TEXT NOT NULL,
    sent_at           TEXT,
    server_version    INTEGER CHECK (server_version >= 1),
    stopped           TEXT,
    CHECK ((sent_at IS NULL) = (server_version IS NULL))
) STRICT;
CREATE INDEX team_outbox_by_link ON team_outbox(study_id, server_assignment, id);
"#,
    // 17: a stopped item's conflict resolved by its rater (`cases::rating::outbox::resolve`):
    // which way, the server's version it was resolved against (the base of the item's next
    // edit), and the stopped edits taken out of the outbox, as they were queued: a rater's work
    // is never dropped without a trace.
    r#"
CREATE TABLE team_resolutions (
    id                INTEGER PRIMARY KEY,
    assignment        INTEGER NOT NULL REFERENCES assignments(id),
    study_id          TEXT NOT NULL,
    server_assignment INTEGER NOT NULL CHECK (server_assignment >= 1),
    resolution        TEXT NOT NULL CHECK (resolution IN ('keep_server', 'send_mine')),
    server_version    INTEGER NOT NULL CHECK (server_version >= 0),
    discarded_json    TEXT NOT NULL,
    resolved_at       TEXT NOT NULL
) STRICT;
CREATE INDEX team_resolutions_by_link ON team_resolutions(study_id, server_assignment);
"#,
    // 18: a rubric version copied onto a team server (`cases::app::team::publish_study`) is
    // frozen here: raters there may rate under it although this database holds no rating under
    // it, so `crate::rubric::change` makes a change of it a new version, never an edit in place.
    // Versions from before were never published by this build: none is marked.
    r#"
ALTER TABLE rubric_versions ADD COLUMN published_at TEXT;
"#,
    // 19: what a rater's computer last learned from the team server of a study it reads there
    // (`cases::app::team::learn_from_server`): the study lead's lock of the ground truth, and the
    // server's rubric version last taken here (the local numbering is this database's own, so
    // the server's number is kept beside it). A database that never read from a server has no
    // row, which reads as "not locked".
    r#"
CREATE TABLE team_server_word (
    study_id              TEXT PRIMARY KEY,
    reveal_locked         INTEGER NOT NULL CHECK (reveal_locked IN (0, 1)),
    server_rubric_version INTEGER CHECK (server_rubric_version >= 1),
    learned_at            TEXT NOT NULL
) STRICT;
"#,
    // 20: a plan may be made by the study lead at this workstation, who is no rater (issue 41: a
    // lead's plan was recorded under whichever rater the form named first, a blinded clinician
    // among them). `created_by` NULL is the study lead; a named rater (a curator acting, or
    // `neurorater assign --lead NAME`) keeps their id. SQLite cannot drop a NOT NULL, so the
    // table is rebuilt (https://sqlite.org/lang_altertable.html#otheralter); its children refer
    // to it by name and find the new one.
    r#"
CREATE TABLE assignment_plans_rebuilt (
    id                  INTEGER PRIMARY KEY,
    study               INTEGER NOT NULL REFERENCES studies(id),
    name                TEXT NOT NULL,
    -- The order of every rater's queue is reproducible from this seed.
    seed                INTEGER NOT NULL,
    overlap_share       REAL NOT NULL CHECK (overlap_share BETWEEN 0 AND 1),
    repeat_share        REAL NOT NULL CHECK (repeat_share BETWEEN 0 AND 1),
    repeat_after_days   INTEGER NOT NULL CHECK (repeat_after_days >= 0),
    -- NULL: the study lead at this workstation.
    created_by          INTEGER REFERENCES raters(id),
    created_at          TEXT NOT NULL,
    responses_per_rater INTEGER CHECK (responses_per_rater >= 1),
    stratify_json       TEXT NOT NULL DEFAULT '[]',
    top_ups             INTEGER NOT NULL DEFAULT 0 CHECK (top_ups >= 0),
    UNIQUE (study, name)
) STRICT;
INSERT INTO assignment_plans_rebuilt (id, study, name, seed, overlap_share, repeat_share,
        repeat_after_days, created_by, created_at, responses_per_rater, stratify_json, top_ups)
    SELECT id, study, name, seed, overlap_share, repeat_share, repeat_after_days, created_by,
           created_at, responses_per_rater, stratify_json, top_ups
    FROM assignment_plans;
DROP TABLE assignment_plans;
ALTER TABLE assignment_plans_rebuilt RENAME TO assignment_plans;
"#,
    // 21: what an exported rater package carried, so its results merge while the rest of the
    // study moves on (issue 36): the lead's rubric version it held and digests of that version's
    // definition and of the taxonomy; per item, digests of the response, the task, the case's
    // clinical context and its images as they were. A merge checks these rather than the whole
    // study's `study_sha256`. Rows from before (and imported packages) have none: their results
    // are checked against `study_sha256` as before.
    r#"
ALTER TABLE rater_packages ADD COLUMN rubric_version INTEGER CHECK (rubric_version >= 1);
ALTER TABLE rater_packages ADD COLUMN rubric_sha256 TEXT;
ALTER TABLE rater_packages ADD COLUMN taxonomy_sha256 TEXT;
ALTER TABLE rater_package_items ADD COLUMN response_sha256 TEXT;
ALTER TABLE rater_package_items ADD COLUMN task_sha256 TEXT;
ALTER TABLE rater_package_items ADD COLUMN case_sha256 TEXT;
ALTER TABLE rater_package_items ADD COLUMN images_sha256 TEXT;
"#,
    // 22: what a stored result's tokens cost at the prices its run's spec named (issue 39, model
    // reliability). Prices may change between runs without changing the spec's hash, so the cost
    // is kept per result as charged, not recomputed from the spec bound at the first run. NULL
    // when the run's spec named no prices, and for results stored before.
    r#"
ALTER TABLE run_results ADD COLUMN cost REAL CHECK (cost >= 0);
"#,
];

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the schema up to [`latest_version`], one transaction per migration.
pub fn apply(conn: &mut Connection) -> rusqlite::Result<Applied> {
    let from: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if from > latest_version() {
        return Ok(Applied::NewerThanThisBuild { found: from });
    }
    if from == latest_version() {
        return Ok(Applied::UpTo(from));
    }
    // A migration that rebuilds a table drops it, which with foreign keys on would cascade into
    // its children; keys are checked explicitly before each commit instead (SQLite's documented
    // procedure for schema changes, https://sqlite.org/lang_altertable.html#otheralter).
    conn.pragma_update(None, "foreign_keys", false)?;
    let outcome = apply_from(conn, from);
    conn.pragma_update(None, "foreign_keys", true)?;
    outcome?;
    Ok(Applied::UpTo(latest_version()))
}

fn apply_from(conn: &mut Connection, from: i64) -> rusqlite::Result<()> {
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        // Another process may be opening the same new file at this moment (the app and the CLI):
        // the write lock is taken first and the version read again under it, so each migration
        // runs once.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if current > index as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        let dangling: i64 =
            tx.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
                row.get(0)
            })?;
        if dangling > 0 {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                Some(format!(
                    "migration {} would leave {dangling} row(s) pointing at nothing",
                    index + 1
                )),
            ));
        }
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    UpTo(i64),
    /// Written by a newer NeuroRater: refuse rather than misread it.
    NewerThanThisBuild {
        found: i64,
    },
}
