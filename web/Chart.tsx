import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'

export type ChartSeries = {
  label: string
  values: (number | null)[]
  color: string
  /** A second y axis on the right for this series (e.g. credits beside calls). */
  right?: boolean
  dash?: number[]
}

export type ChartProps = {
  /** What the chart shows, for screen readers (the figure's accessible name). */
  label: string
  /** Epoch seconds of each point (block numbers with `blockAxis`). */
  x: number[]
  series: ChartSeries[]
  height?: number
  /** The axis names: left, and right when a series uses it. */
  leftUnit: string
  rightUnit?: string
  /** Bars for counts per period, lines otherwise. */
  bars?: boolean
  /** The x values are block numbers, not times. */
  blockAxis?: boolean
}

/** A uPlot chart in a figure with an accessible name; its legend lists each series' value. */
export function Chart(props: ChartProps) {
  const host = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const shape = props.series.map((series) => series.label).join('|')

  useEffect(() => {
    const element = host.current
    if (!element) return
    const width = Math.max(280, element.clientWidth)
    const bars = props.bars ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined
    const options: uPlot.Options = {
      width,
      height: props.height ?? 220,
      // times as UTC, like the tables; bars get half a period of room at each end
      ...(props.blockAxis
        ? {}
        : { tzDate: (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC') }),
      scales: {
        x: {
          time: !props.blockAxis,
          ...(props.bars
            ? {
                range: (_plot: uPlot, min: number, max: number): uPlot.Range.MinMax => {
                  const half = ((props.x[1] ?? min + 1) - (props.x[0] ?? min)) / 2
                  return [min - half, max + half]
                },
              }
            : {}),
        },
        right: {},
      },
      axes: [
        props.blockAxis ? { label: 'block' } : {},
        { label: props.leftUnit, size: 60 },
        ...(props.rightUnit
          ? [{ label: props.rightUnit, scale: 'right', side: 1, size: 60 } as uPlot.Axis]
          : []),
      ],
      series: [
        {},
        ...props.series.map(
          (series): uPlot.Series => ({
            label: series.label,
            stroke: series.color,
            width: 2,
            scale: series.right ? 'right' : 'y',
            ...(series.dash ? { dash: series.dash } : {}),
            ...(props.bars && !series.dash && bars
              ? { paths: bars, points: { show: false }, fill: `${series.color}55` }
              : {}),
          }),
        ),
      ],
    }
    plot.current = new uPlot(options, toData(props), element)
    const resize = new ResizeObserver(() => {
      plot.current?.setSize({ width: Math.max(280, element.clientWidth), height: props.height ?? 220 })
    })
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.current?.destroy()
      plot.current = null
    }
    // rebuilt when the series change; new numbers only update the data (below)
  }, [shape, props.bars, props.blockAxis, props.leftUnit, props.rightUnit])

  useEffect(() => {
    plot.current?.setData(toData(props))
  }, [props.x, props.series])

  return (
    <figure class="chart" role="img" aria-label={props.label}>
      <div ref={host} />
    </figure>
  )
}

function toData(props: ChartProps): uPlot.AlignedData {
  return [props.x, ...props.series.map((series) => series.values)] as uPlot.AlignedData
}
