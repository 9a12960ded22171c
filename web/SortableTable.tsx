import type { ComponentChildren } from 'preact'
import { useMemo, useState } from 'preact/hooks'

export type Column<Row> = {
  key: string
  label: string
  value: (row: Row) => string | number
  /** How the cell shows; the value by default. */
  render?: (row: Row) => ComponentChildren
  numeric?: boolean
}

export type SortableTableProps<Row> = {
  caption: string
  columns: Column<Row>[]
  rows: Row[]
  rowKey: (row: Row) => string
  initialSort?: { key: string; descending: boolean }
  empty?: string
}

/**
 * A table whose column headers are buttons that sort it (aria-sort says how). On a phone its rows
 * stack: each row a block of its cells, each cell after its column's name (`data-label`, style.css),
 * the sort buttons wrapped above them; no column is left beyond the screen's edge.
 */
export function SortableTable<Row>(props: SortableTableProps<Row>) {
  const [sort, setSort] = useState(
    props.initialSort ?? { key: props.columns[0]?.key ?? '', descending: false },
  )
  const sorted = useMemo(() => {
    const column = props.columns.find((each) => each.key === sort.key)
    if (!column) return props.rows
    const direction = sort.descending ? -1 : 1
    return [...props.rows].sort((a, b) => {
      const left = column.value(a)
      const right = column.value(b)
      return (left < right ? -1 : left > right ? 1 : 0) * direction
    })
  }, [props.rows, props.columns, sort])

  return (
    <div class="table-scroll">
      <table class="stack sortable">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => {
              const active = column.key === sort.key
              return (
                <th
                  key={column.key}
                  scope="col"
                  class={column.numeric ? 'numeric' : undefined}
                  aria-sort={active ? (sort.descending ? 'descending' : 'ascending') : 'none'}
                >
                  <button
                    type="button"
                    class="sort"
                    onClick={() =>
                      setSort({
                        key: column.key,
                        descending: active ? !sort.descending : column.numeric === true,
                      })
                    }
                  >
                    {column.label}
                    <span aria-hidden="true">{active ? (sort.descending ? ' ▼' : ' ▲') : ''}</span>
                  </button>
                </th>
              )
            })}
          </tr>
        </thead>
        <tbody>
          {sorted.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length}>{props.empty ?? 'Nothing yet.'}</td>
            </tr>
          ) : (
            sorted.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) => (
                  <td
                    key={column.key}
                    class={column.numeric ? 'numeric' : undefined}
                    data-label={column.label}
                  >
                    {column.render ? column.render(row) : column.value(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  )
}
