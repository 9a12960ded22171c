import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Command } from 'commander'
import { createProgram } from './createProgram.ts'

function helpTexts(command: Command): string[] {
  return [command.helpInformation(), ...command.commands.flatMap(helpTexts)]
}

describe('createProgram', () => {
  it('help texts cite only files in the repository (README.md, docs/)', () => {
    const texts = helpTexts(createProgram())
    assert.ok(texts.length > 15, 'every command and subcommand')
    for (const text of texts) {
      for (const [cited] of text.matchAll(/[\w./-]+\.md\b/g))
        assert.match(cited, /^(README\.md|docs\/[\w./-]+\.md)$/, `${cited} in:\n${text}`)
    }
    assert.ok(texts.some((text) => text.includes('docs/compatibility.md §3')))
  })
})
