import { z } from 'zod';
import { type Route, route } from '../route-table.ts';

export const openapiRoutes: Route[] = [
  route({
    method: 'get',
    path: '/openapi.json',
    doc: () => ({
      summary: 'This document',
      responses: {
        '200': {
          description: 'OpenAPI 3.1',
          json: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
        },
      },
    }),
    handler: () =>
      // Built on the first request, not at start-up: every endpoint's zod schemas turned into JSON Schema
      // would sit in every replica's resident memory from the start, for a document few of them serve.
      async function openapi() {
        return (await import('../openapi.ts')).openapiDocument;
      },
  }),
];
