import fc from 'fast-check';
import { expect } from 'vitest';

/**
 * A fast-check fuzzer for JSON endpoints: random bodies (objects built from the endpoint's own field
 * names and hostile values, any JSON, raw bytes), content types, methods and headers. Every answer must
 * be below 500 (or the one 503 an endpoint documents) and be an envelope.
 */
export interface FuzzTarget {
  baseUrl: string;
  paths: string[];
  fields: string[];
  /** Values that mean something to these endpoints (token prefixes, ids). */
  interesting: string[];
  headers?: () => Record<string, string>;
  /** Statuses at or above 500 the endpoint may answer by design (the standby's 503 service_online). */
  allowed5xx?: number[];
  numRuns?: number;
}

export async function fuzzEndpoints(target: FuzzTarget): Promise<number> {
  const field = fc.constantFrom(...target.fields, '__proto__', 'constructor');
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom(...target.interesting, '\u0000', '', 'x'.repeat(5000)),
    fc.integer(),
    fc.double(),
  );
  const objectBody = fc.dictionary(field, value, { maxKeys: 6 });
  const body = fc.oneof(
    objectBody.map((o) => JSON.stringify(o)),
    fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
    fc.string({ unit: 'binary', maxLength: 300 }),
  );
  const contentType = fc.option(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      ';',
    ),
    { nil: undefined },
  );
  const method = fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE');
  let requests = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...target.paths),
      method,
      contentType,
      body,
      async (path, verb, type, payload) => {
        const headers: Record<string, string> = { ...target.headers?.() };
        if (type !== undefined) headers['content-type'] = type;
        const res = await fetch(target.baseUrl + path, {
          method: verb,
          headers,
          ...(verb === 'GET' ? {} : { body: payload }),
        });
        const text = await res.text();
        requests++;
        if (!target.allowed5xx?.includes(res.status))
          expect(res.status, `${verb} ${path}: ${text}`).toBeLessThan(500);
        const parsed = JSON.parse(text);
        if (res.status >= 400 || parsed.code === -1) {
          // Every error, a token verdict (HTTP 200) included, carries its code in data.error too.
          expect(parsed).toEqual({
            code: -1,
            error: expect.any(String),
            message: expect.any(String),
            msg: expect.any(String),
            data: expect.objectContaining({ error: parsed.error }),
          });
        } else {
          expect(parsed).toEqual({ code: 0, data: expect.any(Object) });
        }
      },
    ),
    { numRuns: target.numRuns ?? 300 },
  );
  return requests;
}
