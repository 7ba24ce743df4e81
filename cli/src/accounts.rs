//! `neurorater team …`: accounts on a team server without curl (docs/team-server.md). A lead
//! invites, lists and revokes invitations, resets a member's password, tops up and locks reveals;
//! anyone accepts an invitation or a reset code, changes their password, and lists and ends their
//! sessions. Codes and passwords are read at the prompt (or one per line from standard input),
//! never from the command line, where other users of the machine and the shell's history see
//! them; a code the lead must pass on is printed once.

use crate::remote::{read_secret, server_url, session, Remote};
use crate::Failure;
use cases::app::team::wire::{InviteRequest, TopUpRequest};
use clap::{Args, Subcommand};
use teamclient::{ServerUrl, TeamClient};

#[derive(Subcommand)]
pub enum TeamCommand {
    /// The lead: invite someone into the study; prints the one-time code to pass on.
    Invite(InviteArgs),
    /// The lead: the study's invitations, newest first, each open, accepted, expired or revoked.
    Invitations(StudyArgs),
    /// The lead: revoke an open invitation (its code stops working).
    Revoke(RevokeArgs),
    /// The lead: reset a member's password. Their sessions end and the old password stops
    /// working; prints the one-time code with which they set a new one (`team set-password`).
    ResetPassword(MemberArgs),
    /// The lead: give raters more work, after the end of their queues.
    TopUp(TopUpArgs),
    /// The lead: lock a rater out of the ground truth and of reopening what they submitted.
    Lock(MemberArgs),
    /// The lead: let a locked rater see the ground truth after submitting again.
    Unlock(MemberArgs),
    /// Accept an invitation: its code, then a password for the new account (or the existing
    /// account's current one). Log in after with `neurorater login`.
    Accept(ServerArgs),
    /// Set a new password with the code of a lead's reset. Log in after with `neurorater login`.
    SetPassword(ServerArgs),
    /// Change your password: the current one, then the new one. Your other sessions end.
    Password(AccountArgs),
    /// Your sessions on the server, newest first; `--end ID` ends one.
    Sessions(SessionsArgs),
}

#[derive(Args)]
pub struct ServerArgs {
    /// The team server: http(s)://HOST[:PORT][/PATH].
    #[arg(long)]
    server: String,
}

#[derive(Args)]
pub struct AccountArgs {
    #[arg(long)]
    server: String,
    /// Needed only when you are logged in to that server under several names.
    #[arg(long)]
    user: Option<String>,
}

#[derive(Args)]
pub struct SessionsArgs {
    #[command(flatten)]
    account: AccountArgs,
    /// End the session with this number (from the list).
    #[arg(long)]
    end: Option<i64>,
}

#[derive(Args)]
pub struct StudyArgs {
    #[command(flatten)]
    remote: Remote,
}

#[derive(Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    remote: Remote,
    /// The invitation's number (`team invitations`).
    #[arg(long)]
    invitation: i64,
}

#[derive(Args)]
pub struct MemberArgs {
    #[command(flatten)]
    remote: Remote,
    /// The member's username.
    #[arg(long)]
    member: String,
}

#[derive(Args)]
pub struct InviteArgs {
    #[command(flatten)]
    remote: Remote,
    /// The username the invitee will log in with.
    #[arg(long)]
    username: String,
    /// rater, curator or lead.
    #[arg(long)]
    role: String,
    /// Their hospital or reading site, for progress per site.
    #[arg(long, default_value = "")]
    site: String,
    /// A rater's: neuroradiologist, neurologist or resident.
    #[arg(long)]
    clinical_role: Option<String>,
    /// A rater's years of clinical experience, if recorded.
    #[arg(long)]
    years_experience: Option<u32>,
}

#[derive(Args)]
pub struct TopUpArgs {
    #[command(flatten)]
    remote: Remote,
    /// A rater to give more work (repeat for several).
    #[arg(long = "rater", required = true)]
    raters: Vec<String>,
    /// At most this many new assignments per rater (default: every response they lack).
    #[arg(long)]
    per_rater: Option<u32>,
    /// YYYY-MM-DD by which the new assignments are due.
    #[arg(long)]
    due_on: Option<String>,
}

/// A value of one of the server's enums (`rater`, `neurologist`) as the option gave it.
fn named<T: serde::de::DeserializeOwned>(
    option: &str,
    text: &str,
    one_of: &str,
) -> Result<T, Failure> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| Failure::Input(vec![format!("--{option}: one of {one_of}, got {text:?}")]))
}

fn block_on<T>(
    work: impl std::future::Future<Output = teamclient::Result<T>>,
) -> Result<T, Failure> {
    Ok(crate::run::runtime()?.block_on(work)?)
}

fn account_client(args: &AccountArgs) -> Result<TeamClient, Failure> {
    let server = server_url(&args.server)?;
    Ok(TeamClient::resume(&session(
        &server,
        args.user.as_deref(),
    )?)?)
}

pub fn run(command: &TeamCommand) -> Result<(), Failure> {
    match command {
        TeamCommand::Invite(args) => {
            let request = InviteRequest {
                username: args.username.clone(),
                role: named("role", &args.role, "rater, curator, lead")?,
                site: args.site.clone(),
                clinical_role: args
                    .clinical_role
                    .as_deref()
                    .map(|role| {
                        named(
                            "clinical-role",
                            role,
                            "neuroradiologist, neurologist, resident",
                        )
                    })
                    .transpose()?,
                years_experience: args.years_experience,
            };
            let client = args.remote.client()?;
            let invitation = block_on(client.invite(&args.remote.study, &request))?;
            crate::print_json(&invitation);
        }
        TeamCommand::Invitations(args) => {
            let client = args.remote.client()?;
            crate::print_json(&block_on(client.invitations(&args.remote.study))?);
        }
        TeamCommand::Revoke(args) => {
            let client = args.remote.client()?;
            block_on(client.revoke_invitation(&args.remote.study, args.invitation))?;
        }
        TeamCommand::ResetPassword(args) => {
            let client = args.remote.client()?;
            let code = block_on(client.reset_password(&args.remote.study, &args.member))?;
            crate::print_json(&code);
        }
        TeamCommand::TopUp(args) => {
            let request = TopUpRequest {
                raters: args.raters.clone(),
                per_rater: args.per_rater,
                due_on: args.due_on.clone(),
            };
            let client = args.remote.client()?;
            crate::print_json(&block_on(client.top_up(&args.remote.study, &request))?);
        }
        TeamCommand::Lock(args) | TeamCommand::Unlock(args) => {
            let locked = matches!(command, TeamCommand::Lock(_));
            let client = args.remote.client()?;
            block_on(client.set_reveal_lock(&args.remote.study, &args.member, locked))?;
        }
        TeamCommand::Accept(args) => {
            let server = server_url(&args.server)?;
            let (code, password) = code_and_password(&server, "the invitation's code")?;
            let membership = block_on(async {
                TeamClient::new(server.clone())?
                    .accept_invitation(&code, &password)
                    .await
            })?;
            crate::print_json(&membership);
        }
        TeamCommand::SetPassword(args) => {
            let server = server_url(&args.server)?;
            let (code, password) = code_and_password(&server, "the reset code")?;
            block_on(async {
                TeamClient::new(server.clone())?
                    .accept_password_reset(&code, &password)
                    .await
            })?;
        }
        TeamCommand::Password(args) => {
            let client = account_client(args)?;
            let current = read_secret(&format!("Current password at {}: ", client.server()))?;
            let new = read_secret("New password (12 characters or more): ")?;
            block_on(client.change_password(&current, &new))?;
        }
        TeamCommand::Sessions(args) => {
            let client = account_client(&args.account)?;
            if let Some(id) = args.end {
                let current = block_on(client.sessions())?
                    .into_iter()
                    .any(|session| session.id == id && session.current);
                if current {
                    return Err(Failure::Input(vec![format!(
                        "--end {id}: that is this session; end it with neurorater logout"
                    )]));
                }
                block_on(client.end_session(id))?;
            }
            crate::print_json(&block_on(client.sessions())?);
        }
    }
    Ok(())
}

fn code_and_password(server: &ServerUrl, code: &str) -> Result<(String, String), Failure> {
    let code = read_secret(&format!("Paste {code} for {server}: "))?;
    let password = read_secret("Your password (12 characters or more): ")?;
    Ok((code, password))
}
