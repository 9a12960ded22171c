import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One span as the receiver read it, from OTLP/HTTP JSON or protobuf. */
export type ReceivedSpan = {
  traceId: string
  spanId: string
  /** Empty for a root span. */
  parentSpanId: string
  name: string
  /** Attribute values as strings (numbers and booleans written out). */
  attributes: Record<string, string>
  /** The resource's `service.name`. */
  service: string
  /** Its status is ERROR (status code 2). */
  failed: boolean
}

export type OtlpReceiver = {
  /** The base URL (`/v1/traces` is where spans are sent). */
  url: string
  spans: ReceivedSpan[]
  /** The content-type of each export received. */
  contentTypes: string[]
  close(): Promise<void>
}

/**
 * An OpenTelemetry collector's OTLP/HTTP trace endpoint, in the test: POST /v1/traces, JSON read as
 * JSON, protobuf decoded by a small reader of the wire format (the fields of
 * ExportTraceServiceRequest a test looks at).
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const contentTypes: string[] = []
  const server = createServer(async (req, res) => {
    const body = await readAll(req)
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end()
      return
    }
    const type = req.headers['content-type'] ?? ''
    contentTypes.push(type)
    if (type.startsWith('application/json')) {
      spans.push(...fromJson(JSON.parse(body.toString()) as JsonExport))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    } else {
      spans.push(...fromProtobuf(body))
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

type JsonValue = {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
type JsonAttribute = { key: string; value: JsonValue }
type JsonExport = {
  resourceSpans?: {
    resource?: { attributes?: JsonAttribute[] }
    scopeSpans?: {
      spans?: {
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        attributes?: JsonAttribute[]
        status?: { code?: number }
      }[]
    }[]
  }[]
}

function fromJson(body: JsonExport): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? ''
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        attributes: attributesOf(span.attributes),
        service,
        failed: span.status?.code === 2,
      })),
    )
  })
}

function attributesOf(attributes: JsonAttribute[] | undefined): Record<string, string> {
  const read: Record<string, string> = {}
  for (const { key, value } of attributes ?? []) {
    read[key] = `${value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue}`
  }
  return read
}

/** A field of a protobuf message: its number, and its bytes (length-delimited) or its varint. */
type Field = { number: number; bytes?: Buffer; varint?: bigint }

function fieldsOf(message: Buffer): Field[] {
  const fields: Field[] = []
  let offset = 0
  const varint = (): bigint => {
    let value = 0n
    let shift = 0n
    for (;;) {
      const byte = message[offset++] as number
      value |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return value
      shift += 7n
    }
  }
  while (offset < message.length) {
    const key = Number(varint())
    const number = key >>> 3
    const wire = key & 7
    if (wire === 0) fields.push({ number, varint: varint() })
    else if (wire === 1) offset += 8
    else if (wire === 5) offset += 4
    else if (wire === 2) {
      const length = Number(varint())
      fields.push({ number, bytes: message.subarray(offset, offset + length) })
      offset += length
    } else throw new Error(`protobuf wire type ${wire} not expected`)
  }
  return fields
}

const messages = (fields: Field[], number: number) =>
  fields.filter((field) => field.number === number && field.bytes).map((field) => field.bytes as Buffer)

/** ExportTraceServiceRequest: resource_spans (1) > resource (1), scope_spans (2) > spans (2). */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return messages(fieldsOf(body), 1).flatMap((resourceSpans) => {
    const fields = fieldsOf(resourceSpans)
    const resource = messages(fields, 1)[0]
    const service = resource ? (protobufAttributes(fieldsOf(resource))['service.name'] ?? '') : ''
    return messages(fields, 2).flatMap((scope) =>
      messages(fieldsOf(scope), 2).map((span) => {
        const spanFields = fieldsOf(span)
        const hex = (number: number) => messages(spanFields, number)[0]?.toString('hex') ?? ''
        return {
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: messages(spanFields, 5)[0]?.toString() ?? '',
          attributes: protobufAttributes(spanFields, 9),
          service,
          // status (15) > code (3)
          failed: fieldsOf(messages(spanFields, 15)[0] ?? Buffer.alloc(0)).some(
            (field) => field.number === 3 && field.varint === 2n,
          ),
        }
      }),
    )
  })
}

/** KeyValue (key 1, AnyValue 2: string 1, bool 2, int 3). */
function protobufAttributes(fields: Field[], number = 1): Record<string, string> {
  const read: Record<string, string> = {}
  for (const keyValue of messages(fields, number)) {
    const parts = fieldsOf(keyValue)
    const key = messages(parts, 1)[0]?.toString() ?? ''
    const value = messages(parts, 2)[0]
    if (!value) continue
    const [first] = fieldsOf(value)
    if (!first) continue
    if (first.number === 1) read[key] = first.bytes?.toString() ?? ''
    else if (first.number === 2) read[key] = `${first.varint === 1n}`
    else if (first.number === 3) read[key] = `${first.varint}`
  }
  return read
}
