import { describe, expect, it } from 'vitest'
import { heldByRefusal, keyAction, labelTextRefusal, type KeyInput } from './keys'

const plain: KeyInput = { key: '', ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, inTextField: false }
const press = (key: string, extra: Partial<KeyInput> = {}) => keyAction({ ...plain, key, ...extra })

describe('keyAction', () => {
  it('maps navigation, rows, digits, labelling and the cheat sheet', () => {
    expect(press('j')).toEqual({ kind: 'next' })
    expect(press('n')).toEqual({ kind: 'next' })
    expect(press('k')).toEqual({ kind: 'previous' })
    expect(press('p')).toEqual({ kind: 'previous' })
    expect(press(']')).toEqual({ kind: 'row', delta: 1 })
    expect(press('[')).toEqual({ kind: 'row', delta: -1 })
    expect(press('4')).toEqual({ kind: 'digit', digit: 4 })
    expect(press('e')).toEqual({ kind: 'label-text' })
    expect(press('i')).toEqual({ kind: 'label-image' })
    expect(press('?', { shiftKey: true })).toEqual({ kind: 'cheat-sheet' })
    expect(press('x')).toBeNull()
  })

  it('maps Ctrl+Enter to submit, Ctrl+Z to undo, Ctrl+Shift+Z and Ctrl+Y to redo', () => {
    expect(press('Enter', { ctrlKey: true })).toEqual({ kind: 'submit' })
    expect(press('z', { ctrlKey: true })).toEqual({ kind: 'undo' })
    expect(press('Z', { ctrlKey: true, shiftKey: true })).toEqual({ kind: 'redo' })
    expect(press('y', { metaKey: true })).toEqual({ kind: 'redo' })
  })

  it('leaves typing in text fields alone except submit and escape', () => {
    expect(press('j', { inTextField: true })).toBeNull()
    expect(press('3', { inTextField: true })).toBeNull()
    expect(press('z', { ctrlKey: true, inTextField: true })).toBeNull()
    expect(press('Enter', { ctrlKey: true, inTextField: true })).toEqual({ kind: 'submit' })
    expect(press('Escape', { inTextField: true })).toEqual({ kind: 'escape' })
  })

  it('ignores plain keys held with Alt and other Ctrl chords', () => {
    expect(press('j', { altKey: true })).toBeNull()
    expect(press('s', { ctrlKey: true })).toBeNull()
  })
})

describe('a refused e', () => {
  it('says why: nothing selected, or a selection outside the model’s texts', () => {
    expect(labelTextRefusal('none')).toMatch(/^Nothing is selected to label: select words in the model’s answer, its rationale or a turn/)
    expect(labelTextRefusal('outside')).toMatch(/^The selection is outside the model’s texts/)
  })
  it('holds the keys that would score the rubric, and only those', () => {
    expect(heldByRefusal({ kind: 'digit', digit: 1 })).toBe(true)
    expect(heldByRefusal({ kind: 'row', delta: 1 })).toBe(true)
    expect(heldByRefusal({ kind: 'label-text' })).toBe(false)
    expect(heldByRefusal({ kind: 'escape' })).toBe(false)
    expect(heldByRefusal({ kind: 'next' })).toBe(false)
  })
})
