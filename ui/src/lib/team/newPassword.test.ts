import { describe, expect, it } from 'vitest'
import { newPasswordProblem } from './newPassword'

describe('newPasswordProblem', () => {
  it('says nothing of empty fields', () => {
    expect(newPasswordProblem('', '')).toBeNull()
  })
  it('counts characters, not bytes, against the 12-character minimum', () => {
    expect(newPasswordProblem('elevenchars', '')).toMatch(/12 characters/)
    expect(newPasswordProblem('äöüäöüäöüäöü', '')).toBeNull()
    expect(newPasswordProblem('😀'.repeat(11), '')).toMatch(/12 characters/)
  })
  it('says when the second typing differs', () => {
    expect(newPasswordProblem('a long enough phrase', 'a long enough phrasE')).toBe('The two passwords differ.')
    expect(newPasswordProblem('a long enough phrase', 'a long enough phrase')).toBeNull()
  })
})
