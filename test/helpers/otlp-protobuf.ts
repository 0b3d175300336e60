/**
 * An OTLP ExportTraceServiceRequest in the protobuf encoding, read into the shape the OTLP/JSON encoding has
 * (ids in hex, attributes as key/value lists), so a receiver checks both encodings with one set of assertions.
 * Only the fields the tests look at are kept; every other field is skipped by its wire type, as a protobuf
 * reader must. Field numbers are those of opentelemetry-proto's trace/v1, resource/v1 and common/v1 messages.
 */

type Fields = Map<number, (bigint | Buffer)[]>;

/** The fields of one message: varints as bigint, length-delimited and fixed-width values as their bytes. */
function fieldsOf(bytes: Buffer): Fields {
  const fields: Fields = new Map();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error('protobuf: a varint runs past the end');
      const byte = bytes[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const number = key >>> 3;
    let value: bigint | Buffer;
    switch (key & 7) {
      case 0: value = varint(); break;
      case 1: value = bytes.subarray(at, at += 8); break;
      case 2: { const length = Number(varint()); value = bytes.subarray(at, at += length); break; }
      case 5: value = bytes.subarray(at, at += 4); break;
      default: throw new Error(`protobuf: wire type ${key & 7} of field ${number} is not one OTLP uses`);
    }
    if (at > bytes.length) throw new Error(`protobuf: field ${number} runs past the end`);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const bytesOf = (fields: Fields, n: number): Buffer[] => (fields.get(n) ?? []) as Buffer[];
const one = (fields: Fields, n: number): Buffer | undefined => bytesOf(fields, n)[0];
const numberOf = (fields: Fields, n: number): number | undefined => {
  const value = fields.get(n)?.[0];
  return typeof value === 'bigint' ? Number(value) : undefined;
};

/** common/v1 AnyValue, as OTLP/JSON writes it (ints as decimal strings). */
function anyValue(bytes: Buffer): Record<string, unknown> {
  const f = fieldsOf(bytes);
  if (f.has(1)) return { stringValue: one(f, 1)!.toString('utf8') };
  if (f.has(2)) return { boolValue: numberOf(f, 2) === 1 };
  if (f.has(3)) return { intValue: BigInt.asIntN(64, f.get(3)![0] as bigint).toString() };
  if (f.has(4)) return { doubleValue: one(f, 4)!.readDoubleLE(0) };
  return {};
}

/** common/v1 KeyValue list. */
function attributes(list: Buffer[]): { key: string; value: Record<string, unknown> }[] {
  return list.map((kv) => {
    const f = fieldsOf(kv);
    const value = one(f, 2);
    return { key: one(f, 1)?.toString('utf8') ?? '', value: value ? anyValue(value) : {} };
  });
}

/** The request as OTLP/JSON would carry it. */
export function decodeTraceRequest(body: Buffer): unknown {
  return {
    resourceSpans: bytesOf(fieldsOf(body), 1).map((rsBytes) => {
      const rs = fieldsOf(rsBytes);
      const resource = one(rs, 1);
      return {
        resource: { attributes: resource ? attributes(bytesOf(fieldsOf(resource), 1)) : [] },
        scopeSpans: bytesOf(rs, 2).map((ssBytes) => ({
          spans: bytesOf(fieldsOf(ssBytes), 2).map((spanBytes) => {
            const s = fieldsOf(spanBytes);
            const status = one(s, 15);
            return {
              traceId: one(s, 1)?.toString('hex') ?? '',
              spanId: one(s, 2)?.toString('hex') ?? '',
              parentSpanId: one(s, 4)?.toString('hex') ?? '',
              name: one(s, 5)?.toString('utf8') ?? '',
              kind: numberOf(s, 6) ?? 0,
              attributes: attributes(bytesOf(s, 9)),
              status: status ? { code: numberOf(fieldsOf(status), 3) ?? 0 } : undefined,
            };
          }),
        })),
      };
    }),
  };
}
