/** A wire error's headers as names and values one after the other (`[name, value, ...]`, as Node writes them). */
export function toHeaderList(headers: Readonly<Record<string, string>>): string[] {
  const list: string[] = []
  for (const name in headers) list.push(name, headers[name] as string)
  return list
}
