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
    handler: ({ openapiDocument }) =>
      async function openapi() {
        return openapiDocument();
      },
  }),
];
