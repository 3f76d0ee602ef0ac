import type { Vendor } from '@gatehouse/standby/siteverify';
import { bodyErrors, errors } from '../openapi-schemas.ts';
import type { RouteDoc } from '../route-table.ts';

/*
 * The siteverify-compatible endpoints in the OpenAPI document. Their request bodies are described, not
 * constrained: like the vendors, they read any body and answer a malformed one in-band (HTTP 200,
 * `success: false`, `bad-request`), so there is no request a schema could call invalid.
 */

const text = { type: 'string' };
const codes = { type: 'array', items: { type: 'string' } };

const ANSWERS: Record<Vendor, Record<string, object>> = {
  turnstile: {
    challenge_ts: { type: 'string', format: 'date-time' },
    hostname: text,
    action: text,
    cdata: text,
    messages: { type: 'array' },
  },
  recaptcha: {
    challenge_ts: { type: 'string', format: 'date-time' },
    hostname: text,
    apk_package_name: text,
    score: { type: 'number', minimum: 0, maximum: 1 },
    action: text,
  },
  hcaptcha: {
    challenge_ts: { type: 'string', format: 'date-time' },
    hostname: text,
    credit: { type: 'boolean' },
    score: { type: 'number', minimum: 0, maximum: 1 },
    score_reason: { type: 'array' },
  },
};

const TITLES: Record<Vendor, string> = {
  turnstile: 'Cloudflare Turnstile',
  recaptcha: 'Google reCAPTCHA (v2 and v3)',
  hcaptcha: 'hCaptcha',
};

function answer(vendor: Vendor) {
  return {
    type: 'object',
    required: ['success'],
    properties: {
      success: { type: 'boolean' },
      'error-codes': codes,
      degraded: { const: true, description: 'Not a vendor field: a dg_ token (quota exhausted), refused.' },
      ...ANSWERS[vendor],
    },
    additionalProperties: false,
  };
}

// A media type object has no `description` in OpenAPI 3.1: the fields are described on the request body.
const FIELDS_DESCRIPTION =
  'secret (the app secret), response (the token), and optionally remoteip, idempotency_key, sitekey (hCaptcha): docs/protocol.md.';
const fields = { schema: {} };

/** The document's operation for one vendor's siteverify path. */
export function siteverifyDoc(vendor: Vendor): RouteDoc {
  // The envelope answers of the body parser and of a database loss.
  const envelopes = errors(...bodyErrors, 'database_unavailable');
  const envelope503 = (envelopes['503'] as { content?: { 'application/json'?: { schema?: object } } })
    ?.content?.['application/json']?.schema;
  const vendorJson = { content: { 'application/json': { schema: answer(vendor) } } };
  return {
    summary: `Siteverify-compatible with ${TITLES[vendor]}: the vendor's request and answer, Gatehouse's validation.`,
    // Not required either: a missing body is answered in-band (`missing-input-secret`), as the vendors do.
    requestBody: {
      description: FIELDS_DESCRIPTION,
      required: false,
      content: {
        'application/x-www-form-urlencoded': fields,
        'multipart/form-data': fields,
        'application/json': fields,
      },
    },
    responses: {
      ...envelopes,
      // Refused before the fields are read, still in the vendor's shape (bad-request).
      '400': { description: 'A body that does not parse, or a NUL in a field', ...vendorJson },
      '413': { description: 'A body over the limit', ...vendorJson },
      '415': { description: 'A media type or charset not read', ...vendorJson },
      '200': {
        description: "The vendor's answer: success, or success false with error-codes",
        ...vendorJson,
      },
      '500': { description: 'Gatehouse failed (success false)', ...vendorJson },
      '503': {
        description: 'Gatehouse cannot validate now: success false, or the envelope of a database loss',
        content: {
          'application/json': {
            schema: { oneOf: [answer(vendor), ...(envelope503 ? [envelope503] : [])] },
          },
        },
      },
    },
  };
}
