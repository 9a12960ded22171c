import { Command } from 'commander'
import { addKeysCommand } from './keysCommand.ts'
import { addMigrateCommand } from './migrateCommand.ts'
import { addPlansCommand } from './plansCommand.ts'
import { addStartCommand } from './startCommand.ts'
import { addUsageCommand } from './usageCommand.ts'

export function createProgram(): Command {
  const program = new Command('tollgate')
    .description('Self-hostable EVM JSON-RPC gateway')
    .showHelpAfterError()
    .enablePositionalOptions()
  addStartCommand(program)
  addKeysCommand(program)
  addUsageCommand(program)
  addPlansCommand(program)
  addMigrateCommand(program)
  return program
}
