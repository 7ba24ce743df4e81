//! Accounts on the team server from the app (docs/team-server.md, "Accounts"): a person sets
//! their password with the code a lead gave them (an invitation's or a reset's) and is logged
//! in, changes it, and sees and ends their sessions; a lead invites, lists and revokes
//! invitations, resets a member's password, tops up and locks reveals. The server decides who
//! may do what; these commands check the shape of what they send.

use super::team::{check_password, log_in, TeamAccount, TeamState};
use crate::error::{CommandError, ErrorCode};
use serde::Deserialize;
use tauri::State;
use teamclient::{
    check_segment, AccountSession, Invitation, InvitationSummary, InviteRequest, ServerUrl,
    TeamClient, TopUpReport, TopUpRequest,
};

/// What a lead's one-time code is for.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum CodeKind {
    /// An invitation: a new account (or a new role for an existing one).
    Invitation,
    /// A password reset: the account's new password.
    PasswordReset,
}

/// The server's codes are 43 characters; anything much longer is not one.
const MAX_CODE_CHARS: usize = 128;

fn check_code(code: &str) -> Result<(), CommandError> {
    if code.trim().is_empty() || code.len() > MAX_CODE_CHARS {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "code: the code the study lead gave you (paste it whole)",
        ));
    }
    Ok(())
}

/// Accepts a lead's code with the person's new password (for an invitation to an existing
/// account, its current one), then logs in as `username`.
#[tauri::command]
#[specta::specta]
pub async fn team_accept_code(
    team: State<'_, TeamState>,
    server: String,
    username: String,
    code: String,
    kind: CodeKind,
    password: String,
) -> Result<TeamAccount, CommandError> {
    check_code(&code)?;
    check_password("password", &password)?;
    check_segment("username", &username)?;
    let client = TeamClient::new(ServerUrl::parse(&server)?)?;
    match kind {
        CodeKind::Invitation => {
            client.accept_invitation(code.trim(), &password).await?;
        }
        CodeKind::PasswordReset => client.accept_password_reset(code.trim(), &password).await?,
    }
    log_in(&team, &server, &username, &password).await
}

/// Changes the logged-in account's password; its other sessions end.
#[tauri::command]
#[specta::specta]
pub async fn team_change_password(
    team: State<'_, TeamState>,
    current_password: String,
    new_password: String,
) -> Result<(), CommandError> {
    check_password("current_password", &current_password)?;
    check_password("new_password", &new_password)?;
    Ok(team
        .client()?
        .change_password(&current_password, &new_password)
        .await?)
}

/// The logged-in account's sessions, newest first.
#[tauri::command]
#[specta::specta]
pub async fn team_sessions(
    team: State<'_, TeamState>,
) -> Result<Vec<AccountSession>, CommandError> {
    Ok(team.client()?.sessions().await?)
}

/// Ends one of the account's sessions elsewhere (this one ends by logging out).
#[tauri::command]
#[specta::specta]
pub async fn team_end_session(team: State<'_, TeamState>, id: i64) -> Result<(), CommandError> {
    Ok(team.client()?.end_session(id).await?)
}

/// The lead invites someone: the one-time code to pass on, shown once.
#[tauri::command]
#[specta::specta]
pub async fn team_invite(
    team: State<'_, TeamState>,
    study_id: String,
    invitation: InviteRequest,
) -> Result<Invitation, CommandError> {
    check_segment("study_id", &study_id)?;
    check_segment("username", &invitation.username)?;
    Ok(team.client()?.invite(&study_id, &invitation).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn team_invitations(
    team: State<'_, TeamState>,
    study_id: String,
) -> Result<Vec<InvitationSummary>, CommandError> {
    check_segment("study_id", &study_id)?;
    Ok(team.client()?.invitations(&study_id).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn team_revoke_invitation(
    team: State<'_, TeamState>,
    study_id: String,
    id: i64,
) -> Result<(), CommandError> {
    check_segment("study_id", &study_id)?;
    Ok(team.client()?.revoke_invitation(&study_id, id).await?)
}

/// The lead resets a member's password: the code with which they set a new one, shown once.
#[tauri::command]
#[specta::specta]
pub async fn team_reset_password(
    team: State<'_, TeamState>,
    study_id: String,
    username: String,
) -> Result<Invitation, CommandError> {
    check_segment("study_id", &study_id)?;
    Ok(team.client()?.reset_password(&study_id, &username).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn team_top_up(
    team: State<'_, TeamState>,
    study_id: String,
    request: TopUpRequest,
) -> Result<TopUpReport, CommandError> {
    check_segment("study_id", &study_id)?;
    for rater in &request.raters {
        check_segment("raters", rater)?;
    }
    Ok(team.client()?.top_up(&study_id, &request).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn team_set_reveal_lock(
    team: State<'_, TeamState>,
    study_id: String,
    username: String,
    locked: bool,
) -> Result<(), CommandError> {
    check_segment("study_id", &study_id)?;
    Ok(team
        .client()?
        .set_reveal_lock(&study_id, &username, locked)
        .await?)
}
