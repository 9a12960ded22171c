/** Held by one process at a time; the others wait and take it when the holder goes. */
export type Leadership = {
  held(): boolean
  /** Called each time this process takes or loses it. */
  onChange(listener: (held: boolean) => void): () => void
  /** Always held, by the one process on its database (SQLite): there is no one to take it from. */
  sole?: true
}
