import process from 'node:process'
import { createProgram } from './cli/createProgram.ts'

/** Process entry for the `tollgate` command. */
await createProgram().parseAsync(process.argv)
