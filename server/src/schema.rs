//! The server's own schema in PostgreSQL, created and migrated at start.
//!
//! Migrations are numbered by their place in [`MIGRATIONS`], recorded in `schema_migrations`, and
//! applied under a session advisory lock: two server processes starting at once on one database
//! take turns, and the second finds the work done. Never edit a released migration; append.

use crate::error::ServerError;
use deadpool_postgres::Pool;

/// `pg_advisory_lock` key of the migration step ("NRMIGRAT" as ASCII).
const MIGRATION_LOCK: i64 = 0x4E52_4D49_4752_4154;

pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: a study as imported from a local database, accounts and roles, assignments, ratings, the
    // edits already applied (idempotency), the audit log.
    r#"
CREATE TABLE studies (
    id          bigserial PRIMARY KEY,
    study_id    text NOT NULL UNIQUE,
    title       text NOT NULL,
    description text NOT NULL,
    rubric      jsonb NOT NULL,
    taxonomy    jsonb NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now()
);

-- `body` is `cases::app::team::TeamCase` (disease group included: never sent to a rater).
CREATE TABLE cases (
    id           bigserial PRIMARY KEY,
    study        bigint NOT NULL REFERENCES studies(id),
    case_id      text NOT NULL,
    body         jsonb NOT NULL,
    ground_truth jsonb,
    UNIQUE (study, case_id)
);

CREATE TABLE series (
    id        bigserial PRIMARY KEY,
    case_ref  bigint NOT NULL REFERENCES cases(id),
    series_id text NOT NULL,
    body      jsonb NOT NULL,
    UNIQUE (case_ref, series_id)
);

CREATE TABLE tasks (
    id       bigserial PRIMARY KEY,
    case_ref bigint NOT NULL REFERENCES cases(id),
    task_id  text NOT NULL,
    body     jsonb NOT NULL,
    UNIQUE (case_ref, task_id)
);

-- Stored responses never change: ratings refer to them. A second import adds new ones only.
CREATE TABLE responses (
    id     bigserial PRIMARY KEY,
    task   bigint NOT NULL REFERENCES tasks(id),
    model  text NOT NULL,
    sample integer NOT NULL CHECK (sample >= 0),
    body   jsonb NOT NULL,
    UNIQUE (task, model, sample)
);

CREATE TABLE grader_scores (
    id       bigserial PRIMARY KEY,
    response bigint NOT NULL REFERENCES responses(id),
    grader   text NOT NULL,
    body     jsonb NOT NULL,
    UNIQUE (response, grader)
);

-- Passwords as argon2id PHC strings, never in clear.
CREATE TABLE accounts (
    id            bigserial PRIMARY KEY,
    username      text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    site          text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    account       bigint NOT NULL REFERENCES accounts(id),
    study         bigint NOT NULL REFERENCES studies(id),
    role          text NOT NULL CHECK (role IN ('lead', 'curator', 'rater')),
    reveal_locked boolean NOT NULL DEFAULT false,
    PRIMARY KEY (account, study)
);

-- Only the SHA-256 of a session token is stored: a copy of this table logs nobody in.
CREATE TABLE sessions (
    token_sha256 text PRIMARY KEY,
    account      bigint NOT NULL REFERENCES accounts(id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- A one-time code, stored as its SHA-256, for one username's role in one study.
CREATE TABLE invitations (
    id          bigserial PRIMARY KEY,
    code_sha256 text NOT NULL UNIQUE,
    study       bigint NOT NULL REFERENCES studies(id),
    username    text NOT NULL,
    role        text NOT NULL CHECK (role IN ('lead', 'curator', 'rater')),
    site        text NOT NULL,
    invited_by  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz
);

-- A rater's queue: positions only grow, so a top-up never moves anyone's place.
CREATE TABLE assignments (
    id         bigserial PRIMARY KEY,
    study      bigint NOT NULL REFERENCES studies(id),
    account    bigint NOT NULL REFERENCES accounts(id),
    response   bigint NOT NULL REFERENCES responses(id),
    position   integer NOT NULL CHECK (position >= 1),
    due_on     date,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account, response),
    UNIQUE (study, account, position)
);

-- `state` is `cases::app::team::TeamRatingState`; `version` counts accepted edits.
CREATE TABLE ratings (
    assignment      bigint PRIMARY KEY REFERENCES assignments(id),
    version         bigint NOT NULL CHECK (version >= 1),
    status          text NOT NULL CHECK (status IN ('draft', 'submitted')),
    state           jsonb NOT NULL,
    seconds_on_task double precision NOT NULL,
    updated_at      timestamptz NOT NULL,
    submitted_at    timestamptz,
    revealed_at     timestamptz
);

-- Every accepted edit by its client id: a resent edit is answered from here, stored once.
CREATE TABLE applied_edits (
    account        bigint NOT NULL REFERENCES accounts(id),
    edit_id        text NOT NULL,
    request_sha256 text NOT NULL,
    assignment     bigint NOT NULL REFERENCES assignments(id),
    ack            jsonb NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account, edit_id)
);

CREATE TABLE audit_log (
    id     bigserial PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT now(),
    actor  text NOT NULL,
    action text NOT NULL,
    entity text NOT NULL,
    before jsonb,
    after  jsonb
);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();
"#,
    // 2: images and rater packages (issue 16). Each series' images, de-identified once at import
    // by the rater package's code (`cases::package::deidentified_image`) with a random key per
    // study that never leaves the server, kept once per content (`images`, by the SHA-256 of
    // the de-identified bytes) and placed per series (`series_images`, with the SHA-256 of the
    // file it came from, so a re-import skips what it copied). A package the server built is
    // recorded with its items, so its results can be uploaded: `base_version` is the rating's
    // version the package's rater worked from (at build, then after each upload).
    r#"
ALTER TABLE studies ADD COLUMN deid_key text;

CREATE TABLE images (
    sha256 text PRIMARY KEY,
    bytes  bytea NOT NULL
);

CREATE TABLE series_images (
    series        bigint NOT NULL REFERENCES series(id),
    position      integer NOT NULL CHECK (position >= 1),
    source_sha256 text NOT NULL,
    image         text NOT NULL REFERENCES images(sha256),
    extension     text NOT NULL,
    PRIMARY KEY (series, position)
);

CREATE TABLE rater_packages (
    id         bigserial PRIMARY KEY,
    package_id text NOT NULL UNIQUE,
    study      bigint NOT NULL REFERENCES studies(id),
    account    bigint NOT NULL REFERENCES accounts(id),
    built_by   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rater_package_items (
    package      bigint NOT NULL REFERENCES rater_packages(id),
    item         integer NOT NULL CHECK (item >= 1),
    assignment   bigint NOT NULL REFERENCES assignments(id),
    base_version bigint NOT NULL CHECK (base_version >= 0),
    PRIMARY KEY (package, item)
);
"#,
    // 3: curation on the server (issue 16). Each series' geometry, copied at import from the
    // lead's database (`cases::store::geometry`), so marks are checked inside the volume; the
    // versions of each case's ground truth and their reviews, as the local tables
    // `ground_truth_versions` and `ground_truth_reviews`. A version imported from the lead's
    // database names its author (`author_name`) without an account; one saved here has both.
    // `cases.ground_truth` stays the current ground truth: a version of main made final replaces
    // it. Curation steps are idempotent by edit id as rating edits are.
    r#"
CREATE TABLE series_geometry (
    series           bigint PRIMARY KEY REFERENCES series(id),
    columns          integer NOT NULL CHECK (columns >= 1),
    rows             integer NOT NULL CHECK (rows >= 1),
    slices           integer NOT NULL CHECK (slices >= 1),
    -- The affine's first three rows, row by row.
    voxel_to_patient double precision[] NOT NULL CHECK (cardinality(voxel_to_patient) = 12)
);

CREATE TABLE curation_versions (
    id          bigserial PRIMARY KEY,
    case_ref    bigint NOT NULL REFERENCES cases(id),
    version     bigint NOT NULL CHECK (version >= 1),
    branch      text NOT NULL,
    based_on    bigint,
    status      text NOT NULL CHECK (status IN ('draft', 'in_review', 'final')),
    source      text NOT NULL CHECK (source IN ('bundle', 'curator', 'consensus', 'import')),
    author      bigint REFERENCES accounts(id),
    author_name text,
    body        jsonb NOT NULL,
    created_at  timestamptz NOT NULL,
    status_by   text,
    status_at   timestamptz,
    UNIQUE (case_ref, version)
);

CREATE TABLE curation_reviews (
    id       bigserial PRIMARY KEY,
    version  bigint NOT NULL REFERENCES curation_versions(id),
    reviewer text NOT NULL,
    decision text NOT NULL
             CHECK (decision IN ('submitted', 'comment', 'changes_requested', 'finalised')),
    comment  text NOT NULL,
    at       timestamptz NOT NULL
);

CREATE TABLE applied_curation_edits (
    account        bigint NOT NULL REFERENCES accounts(id),
    edit_id        text NOT NULL,
    request_sha256 text NOT NULL,
    case_ref       bigint NOT NULL REFERENCES cases(id),
    reply          jsonb NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account, edit_id)
);
"#,
    // 4: a rater's clinical role and years of experience in a study, as the lead's invitation
    // names them: what a package the server builds says of its rater. Memberships from before
    // have none (their packages name a neuroradiologist, as before).
    r#"
ALTER TABLE invitations
    ADD COLUMN clinical_role text CHECK (clinical_role IN ('neuroradiologist', 'neurologist', 'resident')),
    ADD COLUMN years_experience integer CHECK (years_experience BETWEEN 0 AND 70);
ALTER TABLE memberships
    ADD COLUMN clinical_role text CHECK (clinical_role IN ('neuroradiologist', 'neurologist', 'resident')),
    ADD COLUMN years_experience integer CHECK (years_experience BETWEEN 0 AND 70);
"#,
    // 5: rubric versions, numbered as the lead's database numbers them (`cases::rubric`): every
    // version an import brought (`study_rubrics`), the current one's number
    // (`studies.rubric_version`; `studies.rubric` stays the current rubric, its readers
    // unchanged), and the version each rating was last saved under (`ratings.rubric_version`).
    // Before, a study kept the rubric of its first import and every rating was made under it:
    // that rubric is version 1, and every rating's.
    r#"
CREATE TABLE study_rubrics (
    study       bigint NOT NULL REFERENCES studies(id),
    version     integer NOT NULL CHECK (version >= 1),
    rubric      jsonb NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (study, version)
);
INSERT INTO study_rubrics (study, version, rubric, imported_at)
    SELECT id, 1, rubric, imported_at FROM studies;
ALTER TABLE studies ADD COLUMN rubric_version integer NOT NULL DEFAULT 1
    CHECK (rubric_version >= 1);
ALTER TABLE ratings ADD COLUMN rubric_version integer NOT NULL DEFAULT 1
    CHECK (rubric_version >= 1);
"#,
    // 6: a secret per study, from which the pseudonymous case codes a rater is shown are keyed
    // (`cases::case_codes`): an item and a package name each case by its code, never by its id,
    // which may name the diagnosis. Two random UUIDs (v4: 244 random bits), made by PostgreSQL
    // itself (13+) so that no extension is needed; existing studies get one each.
    r#"
ALTER TABLE studies ADD COLUMN case_code_secret bytea NOT NULL
    DEFAULT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
"#,
    // 7: accounts looked after without a terminal (issue 36). Refused logins, kept a day, by
    // username and by address, so that a throttle holds across server processes; each session's
    // public number, client and address, for the list a person sees of their own; a lead's
    // password resets (one-time codes, stored as their SHA-256); revoked invitations. An empty
    // `password_hash` is an account whose password a lead reset: no password logs it in.
    r#"
CREATE TABLE login_failures (
    id       bigserial PRIMARY KEY,
    username text NOT NULL,
    address  text NOT NULL,
    at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_by_username ON login_failures (username, at);
CREATE INDEX login_failures_by_address ON login_failures (address, at);

ALTER TABLE sessions ADD COLUMN id bigserial UNIQUE;
ALTER TABLE sessions ADD COLUMN client text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN address text NOT NULL DEFAULT '';
CREATE INDEX sessions_by_account ON sessions (account);

CREATE TABLE password_resets (
    id          bigserial PRIMARY KEY,
    code_sha256 text NOT NULL UNIQUE,
    account     bigint NOT NULL REFERENCES accounts(id),
    study       bigint NOT NULL REFERENCES studies(id),
    reset_by    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);

ALTER TABLE invitations ADD COLUMN revoked_at timestamptz;
"#,
];

/// Brings the database to the newest schema this build knows; refuses one from a newer build.
pub async fn migrate(pool: &Pool) -> Result<(), ServerError> {
    let mut client = pool.get().await?;
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let outcome = apply(&mut client).await;
    // Released whatever happened; the connection returns to the pool.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    outcome?;
    unlocked?;
    Ok(())
}

async fn apply(client: &mut deadpool_postgres::Client) -> Result<(), ServerError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await?;
    let applied: i32 = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )
        .await?
        .get(0);
    let known = MIGRATIONS.len() as i32;
    if applied > known {
        return Err(ServerError::SchemaTooNew {
            found: applied,
            known,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(applied as usize) {
        let version = index as i32 + 1;
        let tx = client.transaction().await?;
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await?;
        tx.commit().await?;
    }
    Ok(())
}
