/**
 * A tiny builder for Kubernetes structural OpenAPI v3 schemas that also carries the TypeScript type of
 * what it describes, so the CRD's YAML and the operator's types come from one source (`app-spec.ts`, `app-status.ts`).
 * Only what the App CRD needs: no `$ref`, no `oneOf`; every node has a `type` (structural schema rule).
 */

/** One node of a CRD's `openAPIV3Schema`. */
export type JsonSchema = { [key: string]: unknown };

/** A CEL rule (`x-kubernetes-validations`), checked by the apiserver on create and update. */
export interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** A schema node; `T` exists only for the type checker. */
export interface Schema<T> {
  readonly json: JsonSchema;
  readonly optional: boolean;
  /** Phantom member: never set, read only by `Infer`. */
  readonly __type?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<P extends Shape> = { [K in keyof P]: P[K] extends { optional: true } ? K : never }[keyof P];
type RequiredKeys<P extends Shape> = Exclude<keyof P, OptionalKeys<P>>;
type Flatten<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<P extends Shape> = Flatten<
  { [K in RequiredKeys<P>]: Infer<P[K]> } & { [K in OptionalKeys<P>]?: Infer<P[K]> }
>;

interface Common {
  description?: string;
  validations?: CelRule[];
}

/** `preserveUnknown` keeps fields the schema does not name (`x-kubernetes-preserve-unknown-fields`). */
type ObjectOptions = Common & { default?: Record<string, unknown>; preserveUnknown?: boolean };

function node<T>(json: JsonSchema, common: Common = {}): Schema<T> {
  const out: JsonSchema = {};
  if (common.description) out.description = common.description;
  Object.assign(out, json);
  if (common.validations?.length) out['x-kubernetes-validations'] = common.validations;
  return { json: out, optional: false };
}

export const s = {
  string(o: Common & { pattern?: string; minLength?: number; maxLength?: number; format?: string } = {}) {
    const { description, validations, ...rest } = o;
    return node<string>({ type: 'string', ...rest }, { description, validations });
  },
  enum<const V extends string>(values: readonly V[], o: Common & { default?: V } = {}) {
    const { description, validations, ...rest } = o;
    return node<V>({ type: 'string', enum: [...values], ...rest }, { description, validations });
  },
  integer(
    o: Common & { minimum?: number; maximum?: number; default?: number; format?: 'int32' | 'int64' } = {},
  ) {
    const { description, validations, ...rest } = o;
    return node<number>({ type: 'integer', ...rest }, { description, validations });
  },
  number(o: Common & { minimum?: number; maximum?: number; exclusiveMinimum?: boolean } = {}) {
    const { description, validations, ...rest } = o;
    return node<number>({ type: 'number', ...rest }, { description, validations });
  },
  boolean(o: Common & { default?: boolean } = {}) {
    const { description, validations, ...rest } = o;
    return node<boolean>({ type: 'boolean', ...rest }, { description, validations });
  },
  /** RFC 3339 timestamp, as metav1.Time serializes. */
  time(o: Common = {}) {
    return node<string>({ type: 'string', format: 'date-time' }, o);
  },
  /** A resource quantity (`500m`, `256Mi`, `2`): int-or-string like core/v1's. */
  quantity(o: Common = {}) {
    return node<string | number>(
      {
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        pattern:
          '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
        'x-kubernetes-int-or-string': true,
      },
      o,
    );
  },
  array<T>(
    item: Schema<T>,
    o: Common & {
      minItems?: number;
      maxItems?: number;
      listType?: 'atomic' | 'set' | 'map';
      mapKeys?: string[];
    } = {},
  ) {
    const { description, validations, listType, mapKeys, ...rest } = o;
    const json: JsonSchema = { type: 'array', items: item.json, ...rest };
    if (listType) json['x-kubernetes-list-type'] = listType;
    if (mapKeys) json['x-kubernetes-list-map-keys'] = mapKeys;
    return node<T[]>(json, { description, validations });
  },
  /** A string-keyed map of one value type (`additionalProperties`). */
  map<T>(value: Schema<T>, o: Common & { maxProperties?: number } = {}) {
    const { description, validations, ...rest } = o;
    return node<Record<string, T>>(
      { type: 'object', additionalProperties: value.json, ...rest },
      { description, validations },
    );
  },
  /** Free-form object kept as written (`x-kubernetes-preserve-unknown-fields`). */
  freeform(o: Common = {}) {
    return node<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, o);
  },
  /** An object; `preserveUnknown` keeps fields the schema does not name (`x-kubernetes-preserve-unknown-fields`). */
  object<P extends Shape, const O extends ObjectOptions = ObjectOptions>(properties: P, o?: O) {
    const { description, validations, preserveUnknown, ...rest } = o ?? ({} as ObjectOptions);
    const props: JsonSchema = {};
    const required: string[] = [];
    for (const [key, value] of Object.entries(properties)) {
      props[key] = value.json;
      if (!value.optional && !('default' in value.json)) required.push(key);
    }
    const json: JsonSchema = { type: 'object', properties: props, ...rest };
    if (required.length) json.required = required;
    if (preserveUnknown) json['x-kubernetes-preserve-unknown-fields'] = true;
    type Out = O extends { preserveUnknown: true } ? ObjectOf<P> & Record<string, unknown> : ObjectOf<P>;
    return node<Out>(json, { description, validations });
  },
  /** Marks a property as optional (left out of `required`, `?:` in the type). */
  optional<T>(schema: Schema<T>): Schema<T> & { optional: true } {
    return { ...schema, optional: true };
  },
  /**
   * A property with a default: optional for whoever writes the object, always present once the
   * apiserver has stored it, so the type says it is there.
   */
  defaulted<T>(schema: Schema<T>, value: T): Schema<T> {
    return { json: { ...schema.json, default: value }, optional: false };
  },
};
