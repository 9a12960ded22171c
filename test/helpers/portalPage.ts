import type { Locator, Page } from 'playwright-core'

/** The link to one of the account portal's pages in its navigation. */
export const portalNav = (page: Page, name: string): Locator =>
  page.getByRole('navigation', { name: 'Account pages' }).getByRole('link', { name })

/** A part of a key's page, by its heading (`Secret`, `Allowlists`, `Security`, ...). */
export const portalPart = (page: Page, title: string): Locator =>
  page.locator('.action', { has: page.getByRole('heading', { level: 3, name: title, exact: true }) })

export const textOf = async (locator: Locator): Promise<string> => (await locator.textContent()) ?? ''

/** The cells of the rows of `table` that contain `text`, each row's as its texts. */
export const rowCells = (table: Locator, text: string): Promise<string[][]> =>
  table
    .locator('tbody tr', { hasText: text })
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    )

/**
 * The request log's table as shown (`Requests, newest first`): each row's cells by their column's
 * name (the empty table's one cell is no row).
 */
export const shownRequests = (page: Page): Promise<Record<string, string>[]> =>
  page
    .getByRole('table', { name: 'Requests, newest first' })
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows
        .filter((row) => !row.querySelector('td[colspan]'))
        .map((row) =>
          Object.fromEntries(
            [...row.querySelectorAll('td')].map((td) => [td.dataset.label ?? '', td.textContent ?? '']),
          ),
        ),
    )

/**
 * Notes what should never happen on `page`: its script's errors (a resource that failed to load is
 * the test's business) and requests to an origin that is not `ours`. Returns the page.
 */
export function watchPage(
  page: Page,
  ours: (origin: string) => boolean,
  noted: { pageErrors: string[]; elsewhere: string[] },
): Page {
  page.on('pageerror', (err) => noted.pageErrors.push(err.message))
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      noted.pageErrors.push(message.text())
  })
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol.startsWith('http') && !ours(url.origin)) noted.elsewhere.push(request.url())
  })
  return page
}
