import { Command } from 'commander'
import { getPackageVersion } from '../app/getPackageVersion.ts'
import { addAccountsCommand } from './accountsCommand.ts'
import { addConfigCommand } from './configCommand.ts'
import { addKeysCommand } from './keysCommand.ts'
import { addMigrateCommand } from './migrateCommand.ts'
import { addPlansCommand } from './plansCommand.ts'
import { addStartCommand } from './startCommand.ts'
import { addUsageCommand } from './usageCommand.ts'

export function createProgram(): Command {
  const program = new Command('tollgate')
    .description('Self-hostable EVM JSON-RPC gateway')
    .version(getPackageVersion(), '-v, --version', 'print the version')
    .showHelpAfterError()
    .enablePositionalOptions()
  addStartCommand(program)
  addKeysCommand(program)
  addAccountsCommand(program)
  addUsageCommand(program)
  addPlansCommand(program)
  addMigrateCommand(program)
  addConfigCommand(program)
  return program
}
