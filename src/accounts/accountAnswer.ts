/**
 * A resource's answer with a status of its own (201 for something made): the account API answers
 * any other value a handler returns with 200.
 */
export class AccountAnswer {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    this.status = status
    this.body = body
  }
}
