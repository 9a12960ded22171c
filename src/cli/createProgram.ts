import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { addConfigCommand } from './configCommand.ts'
import { addKeysCommand } from './keysCommand.ts'
import { addMigrateCommand } from './migrateCommand.ts'
import { addPlansCommand } from './plansCommand.ts'
import { addStartCommand } from './startCommand.ts'
import { addUsageCommand } from './usageCommand.ts'

export function createProgram(): Command {
  const program = new Command('tollgate')
    .description('Self-hostable EVM JSON-RPC gateway')
    .version(packageVersion(), '-v, --version', 'print the version')
    .showHelpAfterError()
    .enablePositionalOptions()
  addStartCommand(program)
  addKeysCommand(program)
  addUsageCommand(program)
  addPlansCommand(program)
  addMigrateCommand(program)
  addConfigCommand(program)
  return program
}

/** The version in package.json: two folders up from src/cli/ in a checkout, and from dist/cli/ in a release. */
function packageVersion(): string {
  const packageJson = new URL('../../package.json', import.meta.url)
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version
}
