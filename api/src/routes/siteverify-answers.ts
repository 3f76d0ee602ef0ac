import type { Vendor } from '@gatehouse/standby/siteverify';
import { z } from 'zod';
import { dateTime, errorEnvelope } from '../answers.ts';
import type { Answer, RouteDoc } from '../route-table.ts';

/*
 * The siteverify-compatible endpoints' requests and answers, for the OpenAPI document. Their request
 * bodies are described, not constrained: like the vendors, they read any body and answer a malformed one
 * in-band (HTTP 200, `success: false`, `bad-request`), so there is no request a schema could call invalid
 * (the route table's `describedBody`).
 */

const text = z.string().optional();
const score = z.number().min(0).max(1).optional();

/** The fields each vendor adds to a success. */
const ANSWERS: Record<Vendor, z.ZodRawShape> = {
  turnstile: {
    challenge_ts: dateTime.optional(),
    hostname: text,
    action: text,
    cdata: text,
    messages: z.array(z.unknown()).optional(),
  },
  recaptcha: {
    challenge_ts: dateTime.optional(),
    hostname: text,
    apk_package_name: text,
    score,
    action: text,
  },
  hcaptcha: {
    challenge_ts: dateTime.optional(),
    hostname: text,
    credit: z.boolean().optional(),
    score,
    score_reason: z.array(z.unknown()).optional(),
  },
};

const TITLES: Record<Vendor, string> = {
  turnstile: 'Cloudflare Turnstile',
  recaptcha: 'Google reCAPTCHA (v2 and v3)',
  hcaptcha: 'hCaptcha',
};

/** One vendor's answer: success, or success false with its error codes. */
const vendorAnswer = (vendor: Vendor) =>
  z.strictObject({
    success: z.boolean(),
    'error-codes': z.array(z.string()).optional(),
    degraded: z
      .literal(true)
      .optional()
      .meta({ description: 'Not a vendor field: a dg_ token (quota exhausted), refused.' }),
    ...ANSWERS[vendor],
  });

/** The request's fields as the vendors name them (docs/protocol.md). */
export const siteverifyFields = z.object({
  secret: z.string().meta({ description: 'the app secret' }),
  response: z.string().meta({ description: 'the token the widget gave the page' }),
  remoteip: z.string().optional().meta({ description: "the visitor's address, compared with the token's" }),
  idempotency_key: z
    .string()
    .optional()
    .meta({ description: 'a UUID: a retry with the same key gets the same answer' }),
  sitekey: z.string().optional().meta({ description: 'hCaptcha only: the app key the token must be for' }),
});

/** The document's operation for one vendor's siteverify path. */
export function siteverifyDoc(vendor: Vendor): RouteDoc {
  const answer = vendorAnswer(vendor);
  const inVendorShape = (description: string): Answer => ({ description, json: answer });
  return {
    summary: `Siteverify-compatible with ${TITLES[vendor]}: the vendor's request and answer, Gatehouse's validation.`,
    // Not required either: a missing body is answered in-band (`missing-input-secret`), as the vendors do.
    describedBody: {
      description:
        "The vendor's fields (docs/protocol.md); a body without them is answered in-band (bad-request), as the vendors do.",
      fields: siteverifyFields,
      types: ['form', 'multipart', 'json'],
      required: false,
    },
    responses: {
      // Refused before the fields are read, still in the vendor's shape (bad-request).
      '400': inVendorShape('A body that does not parse, or a NUL in a field'),
      '415': inVendorShape('A media type or charset not read'),
      '413': inVendorShape('A body over the limit'),
      '503': {
        description: 'Gatehouse cannot validate now: success false, or the envelope of a database loss',
        json: z.xor([answer, errorEnvelope(['database_unavailable'])]),
      },
      '200': inVendorShape("The vendor's answer: success, or success false with error-codes"),
      '500': inVendorShape('Gatehouse failed (success false)'),
    },
  };
}
