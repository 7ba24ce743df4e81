//! Accounts in PostgreSQL: logging in and out under a throttle, one's own sessions and password,
//! invitations accepted, listed and revoked, and a lead's password reset. Each change runs in one
//! transaction with its audit entry; a password, token or code is never stored or audited, only
//! its argon2id hash or SHA-256.

use super::{audit, from_json, time_text};
use crate::auth::{self, Caller, Peer};
use crate::error::{invalid, ServerError};
use crate::wire::{AccountSession, Invitation, InvitationSummary, LoginReply, Membership};
use cases::app::team::TeamLeadSession;
use deadpool_postgres::{GenericClient, Pool};
use serde_json::{json, Value};

/// Refused logins an account may have in [`FAILURE_WINDOW_MINUTES`] before the next is refused
/// unheard (429): a guesser gets 5 tries in 15 minutes, a person who mistypes is not stopped.
const ACCOUNT_FAILURES: i64 = 5;
/// Refused logins from one address in the window: higher, as a hospital's users share one
/// address behind its proxy, but a guesser trying many usernames is stopped.
const ADDRESS_FAILURES: i64 = 50;
const FAILURE_WINDOW_MINUTES: i32 = 15;
/// How long a password reset code stays valid: the lead passes it on the same day.
const RESET_HOURS: i32 = 48;

/// The stored hash, or `None` for an account whose password a lead reset (stored empty): no
/// password logs it in, and checking one costs as much as for an unknown username.
fn usable_hash(stored: String) -> Option<String> {
    (!stored.is_empty()).then_some(stored)
}

/// Seconds until a login for `username` from `peer` is heard again, if the throttle holds it:
/// until the refusal that filled the window leaves it.
async fn throttled_for(
    client: &impl GenericClient,
    username: &str,
    peer: &Peer,
) -> Result<Option<u64>, ServerError> {
    let row = client
        .query_one(
            "SELECT
               (SELECT ceil(extract(epoch FROM at + make_interval(mins => $3) - now()))::bigint
                FROM login_failures
                WHERE username = $1 AND at > now() - make_interval(mins => $3)
                ORDER BY at DESC OFFSET $4 LIMIT 1),
               (SELECT ceil(extract(epoch FROM at + make_interval(mins => $3) - now()))::bigint
                FROM login_failures
                WHERE address = $2 AND at > now() - make_interval(mins => $3)
                ORDER BY at DESC OFFSET $5 LIMIT 1)",
            &[
                &username,
                &peer.address,
                &FAILURE_WINDOW_MINUTES,
                &(ACCOUNT_FAILURES - 1),
                &(ADDRESS_FAILURES - 1),
            ],
        )
        .await?;
    let (by_account, by_address): (Option<i64>, Option<i64>) = (row.get(0), row.get(1));
    Ok(by_account
        .max(by_address)
        .map(|seconds| seconds.max(1) as u64))
}

/// Records a refused password for `username` from `peer`; the refusal that fills the window of
/// either is audited, once, with whom and where it stopped.
async fn record_failure(pool: &Pool, username: &str, peer: &Peer) -> Result<(), ServerError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // A day is far longer than the window: the rows are evidence for the operator, then swept.
    tx.execute(
        "DELETE FROM login_failures WHERE at < now() - interval '1 day'",
        &[],
    )
    .await?;
    tx.execute(
        "INSERT INTO login_failures (username, address) VALUES ($1, $2)",
        &[&username, &peer.address],
    )
    .await?;
    let row = tx
        .query_one(
            "SELECT count(*) FILTER (WHERE username = $1), count(*) FILTER (WHERE address = $2)
             FROM login_failures WHERE at > now() - make_interval(mins => $3)",
            &[&username, &peer.address, &FAILURE_WINDOW_MINUTES],
        )
        .await?;
    let (by_account, by_address): (i64, i64) = (row.get(0), row.get(1));
    let filled = [
        (
            by_account == ACCOUNT_FAILURES,
            format!("account:{username}"),
        ),
        (
            by_address == ADDRESS_FAILURES,
            format!("address:{}", peer.address),
        ),
    ];
    for (_, entity) in filled.iter().filter(|(filled, _)| *filled) {
        audit(
            &tx,
            "server",
            "throttle logins",
            entity,
            None,
            Some(&json!({
                "username": username, "address": peer.address,
                "failures": by_account.max(by_address),
                "window_minutes": FAILURE_WINDOW_MINUTES,
            })),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Checks `password` for `username` under the throttle: `Ok(account)` when it is right; a wrong
/// one is recorded and refused as `wrong`.
async fn check_password(
    pool: &Pool,
    username: &str,
    password: String,
    peer: &Peer,
    wrong: ServerError,
) -> Result<i64, ServerError> {
    let client = pool.get().await?;
    if let Some(retry_after_seconds) = throttled_for(&client, username, peer).await? {
        return Err(ServerError::Throttled {
            retry_after_seconds,
        });
    }
    let found = client
        .query_opt(
            "SELECT id, password_hash FROM accounts WHERE username = $1",
            &[&username],
        )
        .await?;
    drop(client);
    let (account, stored) = match found {
        Some(row) => (Some(row.get::<_, i64>(0)), usable_hash(row.get(1))),
        None => (None, None),
    };
    // Verified even for an unknown username (against a decoy): a wrong username takes as long.
    let right = auth::verify_password(password, stored).await?;
    match account {
        Some(account) if right => Ok(account),
        _ => {
            record_failure(pool, username, peer).await?;
            Err(wrong)
        }
    }
}

pub async fn login(
    pool: &Pool,
    username: &str,
    password: String,
    peer: &Peer,
) -> Result<LoginReply, ServerError> {
    let wrong = ServerError::Unauthenticated("unknown username or wrong password");
    let account = check_password(pool, username, password, peer, wrong).await?;
    let token = auth::new_secret()?;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let expires_at: String = tx
        .query_one(
            &format!(
                "INSERT INTO sessions (token_sha256, account, expires_at, client, address)
                 VALUES ($1, $2, now() + make_interval(hours => $3), $4, $5) RETURNING {}",
                time_text("expires_at")
            ),
            &[
                &auth::secret_sha256(&token),
                &account,
                &auth::SESSION_HOURS,
                &peer.client,
                &peer.address,
            ],
        )
        .await?
        .get(0);
    // Expired sessions are of no use to anyone; each login sweeps them. A right password clears
    // the account's refusals (not its address's: a guesser may know one password).
    tx.execute("DELETE FROM sessions WHERE expires_at < now()", &[])
        .await?;
    tx.execute(
        "DELETE FROM login_failures WHERE username = $1",
        &[&username],
    )
    .await?;
    tx.commit().await?;
    Ok(LoginReply { token, expires_at })
}

pub async fn logout(pool: &Pool, caller: &Caller) -> Result<(), ServerError> {
    pool.get()
        .await?
        .execute(
            "DELETE FROM sessions WHERE token_sha256 = $1",
            &[&caller.token_sha256],
        )
        .await?;
    Ok(())
}

/// Sets a new password after checking the current one (under the login throttle: a stolen
/// session must not become a way to guess it), and ends every other session of the account.
pub async fn change_password(
    pool: &Pool,
    caller: &Caller,
    current: String,
    new: String,
    peer: &Peer,
) -> Result<u64, ServerError> {
    auth::check_password_shape(&new).map_err(|_| {
        invalid(
            "new_password",
            "12 to 1,024 characters: a phrase of a few words is easiest",
        )
    })?;
    let wrong = ServerError::Forbidden("the current password is not right".into());
    check_password(pool, &caller.username, current, peer, wrong).await?;
    let hash = auth::hash_password(new).await?;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.execute(
        "UPDATE accounts SET password_hash = $2 WHERE id = $1",
        &[&caller.account, &hash],
    )
    .await?;
    let ended = tx
        .execute(
            "DELETE FROM sessions WHERE account = $1 AND token_sha256 <> $2",
            &[&caller.account, &caller.token_sha256],
        )
        .await?;
    audit(
        &tx,
        &caller.username,
        "change password",
        &format!("account:{}", caller.username),
        None,
        Some(&json!({ "sessions_ended": ended })),
    )
    .await?;
    tx.commit().await?;
    Ok(ended)
}

/// The caller's own sessions that have not expired, newest first.
pub async fn sessions(pool: &Pool, caller: &Caller) -> Result<Vec<AccountSession>, ServerError> {
    let rows = pool
        .get()
        .await?
        .query(
            &format!(
                "SELECT id, {}, {}, client, address, token_sha256 = $2 FROM sessions
                 WHERE account = $1 AND expires_at > now() ORDER BY created_at DESC, id DESC",
                time_text("created_at"),
                time_text("expires_at")
            ),
            &[&caller.account, &caller.token_sha256],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| AccountSession {
            id: row.get(0),
            created_at: row.get(1),
            expires_at: row.get(2),
            client: row.get(3),
            address: row.get(4),
            current: row.get(5),
        })
        .collect())
}

/// Ends one of the caller's sessions; anyone else's is "not found".
pub async fn end_session(pool: &Pool, caller: &Caller, id: i64) -> Result<(), ServerError> {
    let ended = pool
        .get()
        .await?
        .execute(
            "DELETE FROM sessions WHERE id = $1 AND account = $2",
            &[&id, &caller.account],
        )
        .await?;
    if ended == 0 {
        return Err(ServerError::NotFound(format!("your session {id}")));
    }
    Ok(())
}

/// A lead resets a member's password: the old one stops working, every session of the account
/// ends now, and a one-time code (shown once) lets the member set a new one. Only an account
/// whose every role is in studies the caller leads: a code the lead holds must not open another
/// study.
pub async fn reset_password(
    pool: &Pool,
    lead: &TeamLeadSession,
    username: &str,
) -> Result<Invitation, ServerError> {
    let member = lead.member();
    if username == member.username {
        return Err(invalid(
            "username",
            "this is you: change your own password with POST /api/password",
        ));
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let account: i64 = tx
        .query_opt(
            "SELECT a.id FROM accounts a JOIN memberships m ON m.account = a.id
             WHERE a.username = $1 AND m.study = $2 FOR UPDATE OF a",
            &[&username, &member.study],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("member {username:?} of this study")))?
        .get(0);
    let elsewhere: i64 = tx
        .query_one(
            "SELECT count(*) FROM memberships m WHERE m.account = $1 AND NOT EXISTS (
                 SELECT 1 FROM memberships l
                 WHERE l.account = $2 AND l.study = m.study AND l.role = 'lead')",
            &[&account, &member.account],
        )
        .await?
        .get(0);
    if elsewhere > 0 {
        return Err(ServerError::Forbidden(format!(
            "{username} has a role in a study you do not lead: the server's operator resets \
             their password"
        )));
    }
    tx.execute(
        "UPDATE accounts SET password_hash = '' WHERE id = $1",
        &[&account],
    )
    .await?;
    let sessions_ended = tx
        .execute("DELETE FROM sessions WHERE account = $1", &[&account])
        .await?;
    // One open code per account: an earlier one passed on by mistake stops working.
    tx.execute(
        "UPDATE password_resets SET used_at = now() WHERE account = $1 AND used_at IS NULL",
        &[&account],
    )
    .await?;
    let code = auth::new_secret()?;
    let expires_at: String = tx
        .query_one(
            &format!(
                "INSERT INTO password_resets (code_sha256, account, study, reset_by, expires_at)
                 VALUES ($1, $2, $3, $4, now() + make_interval(hours => $5)) RETURNING {}",
                time_text("expires_at")
            ),
            &[
                &auth::secret_sha256(&code),
                &account,
                &member.study,
                &member.username,
                &RESET_HOURS,
            ],
        )
        .await?
        .get(0);
    audit(
        &tx,
        &member.username,
        "reset password",
        &format!("account:{username}"),
        None,
        Some(&json!({ "sessions_ended": sessions_ended, "expires_at": expires_at })),
    )
    .await?;
    tx.commit().await?;
    Ok(Invitation { code, expires_at })
}

/// Sets the password of the account a lead's reset code names. A used, expired or unknown code
/// is the same "not found".
pub async fn accept_password_reset(
    pool: &Pool,
    code: &str,
    password: String,
) -> Result<(), ServerError> {
    auth::check_password_shape(&password)?;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(
            "SELECT r.id, r.account, a.username FROM password_resets r
             JOIN accounts a ON a.id = r.account
             WHERE r.code_sha256 = $1 AND r.used_at IS NULL AND r.expires_at > now()
             FOR UPDATE OF r, a",
            &[&auth::secret_sha256(code)],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound("an open password reset with this code".into()))?;
    let (reset, account, username): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
    // Hashed once the code is known to be good: an unknown code costs no argon2 work.
    let hash = auth::hash_password(password).await?;
    tx.execute(
        "UPDATE accounts SET password_hash = $2 WHERE id = $1",
        &[&account, &hash],
    )
    .await?;
    tx.execute("DELETE FROM sessions WHERE account = $1", &[&account])
        .await?;
    tx.execute(
        "UPDATE password_resets SET used_at = now() WHERE id = $1",
        &[&reset],
    )
    .await?;
    tx.execute(
        "DELETE FROM login_failures WHERE username = $1",
        &[&username],
    )
    .await?;
    audit(
        &tx,
        &username,
        "set password after reset",
        &format!("account:{username}"),
        None,
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Every invitation of the lead's study, newest first, with what became of it.
pub async fn invitations(
    pool: &Pool,
    lead: &TeamLeadSession,
) -> Result<Vec<InvitationSummary>, ServerError> {
    let rows = pool
        .get()
        .await?
        .query(
            &format!(
                "SELECT id, username, role, site, clinical_role, years_experience, invited_by,
                        {}, {},
                        CASE WHEN accepted_at IS NOT NULL THEN 'accepted'
                             WHEN revoked_at IS NOT NULL THEN 'revoked'
                             WHEN expires_at <= now() THEN 'expired'
                             ELSE 'open' END,
                        {}
                 FROM invitations WHERE study = $1 ORDER BY created_at DESC, id DESC",
                time_text("created_at"),
                time_text("expires_at"),
                time_text("coalesce(accepted_at, revoked_at)")
            ),
            &[&lead.member().study],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let clinical_role: Option<String> = row.get(4);
            let years: Option<i32> = row.get(5);
            Ok(InvitationSummary {
                id: row.get(0),
                username: row.get(1),
                role: from_json(Value::String(row.get(2)), "an invitation's role")?,
                site: row.get(3),
                clinical_role: clinical_role
                    .map(|role| from_json(Value::String(role), "an invitation's clinical role"))
                    .transpose()?,
                years_experience: years.and_then(|y| u32::try_from(y).ok()),
                invited_by: row.get(6),
                created_at: row.get(7),
                expires_at: row.get(8),
                state: row.get(9),
                closed_at: row.get(10),
            })
        })
        .collect()
}

/// Revokes an open invitation of the lead's study: its code stops working. An accepted one is
/// refused (the member's role stays); revoking twice is no error.
pub async fn revoke_invitation(
    pool: &Pool,
    lead: &TeamLeadSession,
    id: i64,
) -> Result<(), ServerError> {
    let member = lead.member();
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(
            "SELECT username, accepted_at IS NOT NULL, revoked_at IS NOT NULL FROM invitations
             WHERE id = $1 AND study = $2 FOR UPDATE",
            &[&id, &member.study],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("invitation {id} of this study")))?;
    let (username, accepted, revoked): (String, bool, bool) = (row.get(0), row.get(1), row.get(2));
    if accepted {
        return Err(ServerError::Conflict(format!(
            "{username} already accepted invitation {id}: their role in the study stays"
        )));
    }
    if !revoked {
        tx.execute(
            "UPDATE invitations SET revoked_at = now() WHERE id = $1",
            &[&id],
        )
        .await?;
        audit(
            &tx,
            &member.username,
            "revoke invitation",
            &format!("invitation:{username}"),
            None,
            Some(&json!({ "invitation": id })),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Accepts a one-time code: creates the account (or, for an existing one, checks its password)
/// and adds the invited role. A used, expired or unknown code is the same "not found".
pub async fn accept_invitation(
    pool: &Pool,
    code: &str,
    password: String,
) -> Result<Membership, ServerError> {
    auth::check_password_shape(&password)?;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(
            "SELECT i.id, i.study, i.username, i.role, i.site, s.study_id, s.title,
                    i.clinical_role, i.years_experience
             FROM invitations i JOIN studies s ON s.id = i.study
             WHERE i.code_sha256 = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
               AND i.expires_at > now()
             FOR UPDATE OF i",
            &[&auth::secret_sha256(code)],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound("an open invitation with this code".into()))?;
    let (invitation, study, username, role, site, study_id, title): (
        i64,
        i64,
        String,
        String,
        String,
        String,
        String,
    ) = (
        row.get(0),
        row.get(1),
        row.get(2),
        row.get(3),
        row.get(4),
        row.get(5),
        row.get(6),
    );
    let existing = tx
        .query_opt(
            "SELECT id, password_hash FROM accounts WHERE username = $1 FOR UPDATE",
            &[&username],
        )
        .await?;
    let account: i64 = match existing {
        Some(row) => {
            let Some(stored) = usable_hash(row.get(1)) else {
                return Err(ServerError::Unauthenticated(
                    "this username's password was reset: set a new one with the code the lead \
                     gave you first (POST /api/password-resets/accept)",
                ));
            };
            if !auth::verify_password(password, Some(stored)).await? {
                return Err(ServerError::Unauthenticated(
                    "this username has an account: give its current password to accept",
                ));
            }
            row.get(0)
        }
        None => {
            let hash = auth::hash_password(password).await?;
            tx.query_one(
                "INSERT INTO accounts (username, password_hash, site) VALUES ($1, $2, $3)
                 RETURNING id",
                &[&username, &hash, &site],
            )
            .await?
            .get(0)
        }
    };
    let (clinical_role, years_experience): (Option<String>, Option<i32>) = (row.get(7), row.get(8));
    let added = tx
        .execute(
            "INSERT INTO memberships (account, study, role, clinical_role, years_experience)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (account, study) DO NOTHING",
            &[&account, &study, &role, &clinical_role, &years_experience],
        )
        .await?;
    if added == 0 {
        return Err(ServerError::Conflict(format!(
            "{username} already has a role in study {study_id}; one role per study"
        )));
    }
    tx.execute(
        "UPDATE invitations SET accepted_at = now() WHERE id = $1",
        &[&invitation],
    )
    .await?;
    audit(
        &tx,
        &username,
        "accept invitation",
        &format!("membership:{study_id}/{username}"),
        None,
        Some(&json!({ "role": role, "site": site })),
    )
    .await?;
    tx.commit().await?;
    Ok(Membership {
        study_id,
        title,
        role: from_json(Value::String(role), "a membership's role")?,
        reveal_locked: false,
        rubric_version: None,
    })
}
