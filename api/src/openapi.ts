import { captchaArgs, errorEnvelope, withAuthThrottling } from './answers.ts';
import { answerSchema } from './json-schema.ts';
import { OPENAPI_TAGS, withTags } from './openapi-tags.ts';
import { documentPaths } from './route-table.ts';
import { API_ROUTES } from './routes/index.ts';

/**
 * The OpenAPI 3.1 document of the main API, built from the route table (routes/index.ts): each
 * operation's request schemas are the zod schemas its route reads with, so the document cannot drift from
 * what is enforced; its answers are the zod declarations on the route (answers.ts holds the shared ones),
 * and every test response is checked against them (api/test/openapi-contract.test.ts).
 */
export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Gatehouse API',
    version: '1.0.0',
    description:
      'Human/bot verification. Every error answers the envelope {code: -1, error, message}; SDKs should read the body, not only the status.',
  },
  components: {
    securitySchemes: {
      appKey: { type: 'apiKey', in: 'header', name: 'X-App-Key' },
      appSecret: { type: 'apiKey', in: 'header', name: 'X-App-Secret' },
      admin: { type: 'http', scheme: 'bearer' },
      standbySync: {
        type: 'http',
        scheme: 'bearer',
        description: 'STANDBY_SYNC_TOKEN; the admin token is refused',
      },
    },
    schemas: { ErrorEnvelope: answerSchema(errorEnvelope()), CaptchaArgs: answerSchema(captchaArgs) },
  },
  tags: OPENAPI_TAGS,
  paths: documentPaths(API_ROUTES, withAuthThrottling),
} as const;

// Every operation in its group (openapi-tags.ts), whichever file declared it.
withTags(openapiDocument.paths);
