import { Buffer } from 'node:buffer'

/**
 * One answer's bytes in parts, written out one after the other without joining them: a kept result
 * (large, so kept as bytes) with its caller's id around it. Joining would copy the whole result on
 * every cache hit; a socket takes the parts as they are (one writev).
 */
export class AnswerParts {
  readonly byteLength: number

  constructor(readonly parts: readonly Buffer[]) {
    let byteLength = 0
    for (const part of parts) byteLength += part.length
    this.byteLength = byteLength
  }

  /** The parts joined (a copy): for what needs one buffer (a WebSocket frame, a batch). */
  toBuffer(): Buffer {
    return Buffer.concat(this.parts as Buffer[], this.byteLength)
  }

  toString(): string {
    return this.toBuffer().toString()
  }
}
