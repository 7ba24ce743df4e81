// The rule a new password on the team server must meet (server/src/auth.rs: 12 to 1,024
// characters), said before it is sent, and whether it was typed the same twice. One rule for every
// form that sets a password.

export const MIN_PASSWORD_CHARS = 12

/** What is wrong with `password` typed as `again`, in words; null when nothing is (or nothing is
 * typed yet: a form does not scold an empty field). */
export function newPasswordProblem(password: string, again: string): string | null {
  if (password.length > 0 && [...password].length < MIN_PASSWORD_CHARS) {
    return `At least ${MIN_PASSWORD_CHARS} characters: a phrase of a few words is easiest.`
  }
  if (again.length > 0 && again !== password) return 'The two passwords differ.'
  return null
}
