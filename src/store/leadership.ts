/** Held by one process at a time; the others wait and take it when the holder goes. */
export type Leadership = {
  held(): boolean
  /** Called each time this process takes or loses it. */
  onChange(listener: (held: boolean) => void): () => void
  /** Always held, by the one process on its database (SQLite): there is no one to take it from. */
  sole?: true
}

/** What a lease's holder side keeps: whether it is held, and who hears when that changes. */
export type HeldLease = { held: boolean; listeners: Set<(held: boolean) => void> }

/** The lease is now held (or not): its listeners hear of it once per change; one that throws is reported, the others still hear. */
export function announceHeld(lease: HeldLease, held: boolean, onError: (err: unknown) => void): void {
  if (lease.held === held) return
  lease.held = held
  for (const listener of lease.listeners) {
    try {
      listener(held)
    } catch (err) {
      onError(err)
    }
  }
}
