import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { openapiDocument } from '../src/openapi.ts';

/*
 * Checks real HTTP answers against the OpenAPI document: the status must be documented for the
 * operation, and a JSON body must match that response's schema (JSON Schema 2020-12, which OpenAPI 3.1
 * uses). Other test files call expectMatchesOpenApi() on the answers they already have.
 */

// Both are CommonJS: the default import is module.exports, whose `default` is the class (or plugin).
const Ajv = Ajv2020.default;
type AjvInstance = InstanceType<typeof Ajv>;

type Schema = Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, unknown>> } & Schema;

/** What the harness's post() returns, or any answer shaped like it. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  headers?: Headers;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export class OpenApiContract {
  readonly document: Doc;
  readonly #ajv: AjvInstance;
  readonly #compiled = new Map<string, ReturnType<AjvInstance['compile']>>();

  constructor(document: unknown) {
    this.document = document as Doc;
    this.#ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats.default(this.#ajv);
    // OpenAPI's own schema keywords (3.1 adds these to JSON Schema).
    for (const keyword of ['discriminator', 'xml', 'externalDocs', 'example']) {
      this.#ajv.addKeyword({ keyword });
    }
  }

  /** Every operation of the document as [path, method, operation]. */
  operations(): [string, string, Schema][] {
    const out: [string, string, Schema][] = [];
    for (const [path, item] of Object.entries(this.document.paths)) {
      for (const method of METHODS) {
        if (item[method]) out.push([path, method, item[method] as Schema]);
      }
    }
    return out;
  }

  /** The documented path template a concrete path falls under (`/admin/v1/apps/ak_x` → `/admin/v1/apps/{appKey}`). */
  template(path: string): string | undefined {
    const bare = path.split('?')[0]!;
    if (this.document.paths[bare]) return bare;
    return Object.keys(this.document.paths).find((template) => {
      const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      return new RegExp(`^${pattern}$`).test(bare);
    });
  }

  /** Compiles a schema (local `$ref`s inlined first); throws when the schema is not valid JSON Schema 2020-12. */
  compile(schema: unknown, cacheKey?: string) {
    const hit = cacheKey ? this.#compiled.get(cacheKey) : undefined;
    if (hit) return hit;
    const validate = this.#ajv.compile(this.#inline(schema, 0) as Schema);
    if (cacheKey) this.#compiled.set(cacheKey, validate);
    return validate;
  }

  /** Everything wrong with one answer, as sentences; empty when it matches the document. */
  problems(path: string, method: string, answer: ApiAnswer): string[] {
    const template = this.template(path);
    if (!template) return [`${path} is not in the OpenAPI document`];
    const operation = this.document.paths[template]![method.toLowerCase()] as Schema | undefined;
    if (!operation) return [`${method.toUpperCase()} ${template} is not in the OpenAPI document`];
    const responses = (operation.responses ?? {}) as Record<string, Schema>;
    const key = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((k) => responses[k]);
    const where = `${method.toUpperCase()} ${template} ${answer.status}`;
    if (!key) return [`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`];
    const content = responses[key]!.content as Record<string, { schema?: unknown }> | undefined;
    const jsonSchema = content?.['application/json']?.schema;
    const hasBody = answer.body !== undefined && answer.body !== '';
    if (!jsonSchema) {
      return hasBody && typeof answer.body === 'object' ? [`${where}: a JSON body is not documented`] : [];
    }
    const problems: string[] = [];
    const type = answer.headers?.get('content-type');
    if (answer.headers && !type?.startsWith('application/json')) {
      problems.push(`${where}: content-type ${type} is not application/json`);
    }
    const validate = this.compile(jsonSchema, `${template} ${method} ${key}`);
    if (!validate(answer.body)) {
      for (const e of validate.errors ?? []) {
        problems.push(`${where}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
      }
    }
    return problems;
  }

  #inline(node: unknown, depth: number): unknown {
    if (depth > 32) throw new Error('OpenAPI $ref nesting too deep (a cycle?)');
    if (Array.isArray(node)) return node.map((n) => this.#inline(n, depth));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as Schema).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      return this.#inline(this.#pointer(ref), depth + 1);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.#inline(v, depth)]));
  }

  #pointer(ref: string): unknown {
    let node: unknown = this.document;
    for (const raw of ref.slice(2).split('/')) {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      node = (node as Schema | undefined)?.[part];
      if (node === undefined) throw new Error(`Unresolvable $ref ${ref}`);
    }
    return node;
  }
}

/** The document the API serves (JSON round trip of the object it serializes), until a test installs the fetched one. */
let current = new OpenApiContract(JSON.parse(JSON.stringify(openapiDocument)));

/** Checks later answers against this document (the contract test installs the one GET /openapi.json served). */
export function useOpenApiDocument(document: unknown): OpenApiContract {
  current = new OpenApiContract(document);
  return current;
}

export function openApiContract(): OpenApiContract {
  return current;
}

/** Asserts that an answer of `method path` is documented and matches its response schema. */
export function expectMatchesOpenApi(path: string, method: string, answer: ApiAnswer): void {
  expect(current.problems(path, method, answer), JSON.stringify(answer.body)).toEqual([]);
}
