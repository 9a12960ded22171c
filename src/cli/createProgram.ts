import { Command } from 'commander'
import { addKeysCommand } from './keysCommand.ts'
import { addStartCommand } from './startCommand.ts'

export function createProgram(): Command {
  const program = new Command('tollgate')
    .description('Self-hostable EVM JSON-RPC gateway')
    .showHelpAfterError()
    .enablePositionalOptions()
  addStartCommand(program)
  addKeysCommand(program)
  return program
}
