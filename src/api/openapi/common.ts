// Schemas shared by every part of the OpenAPI document (JSON Schema 2020-12, as OpenAPI 3.1 uses).
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const commonSchemas = {
  Uuid: { type: 'string', format: 'uuid' },
  Amount: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 32, description: 'Decimal string' },
  Currency: { type: 'string', enum: ['XAF', 'XOF'] },
  CountryCode: { type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Z]{2}$' },
  RailType: { type: 'string', enum: ['mobile_money', 'bank_transfer'] },
  DateTime: { type: 'string', format: 'date-time' },
  Metadata: {
    type: 'object',
    maxProperties: 20,
    propertyNames: { maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 500 },
    description: 'Flat object of at most 20 string values of up to 500 characters',
  },
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          request_id: { type: 'string' },
          details: {
            type: 'array',
            items: {
              type: 'object',
              required: ['field', 'message'],
              properties: { field: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  Meta: {
    type: 'object',
    properties: { idempotency_key: { type: 'string' }, idempotency_replayed: { type: 'boolean' } },
  },
  StatusHistoryEntry: {
    type: 'object',
    properties: {
      status: { type: 'string' },
      reason: { type: ['string', 'null'] },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
} as const;

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});

export const errors = {
  400: errorResponse('Invalid request or business refusal'),
  401: errorResponse('Missing, invalid, expired or inactive credentials'),
  404: errorResponse('Not found for the authenticated merchant'),
  409: errorResponse('Idempotency conflict or same key still processing'),
  429: errorResponse('Rate limited'),
};

export const json = (schema: unknown, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export const body = (schema: unknown) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export const idParam = (name: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
});

export const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'One unique key per business intent; reuse only to retry the same body. Kept 24 hours.',
};

export const listParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: 200 } },
  { name: 'status', in: 'query', schema: { type: 'string', maxLength: 40 } },
  { name: 'customer_id', in: 'query', schema: { type: 'string', format: 'uuid' } },
  { name: 'created_from', in: 'query', schema: { type: 'string', format: 'date-time' } },
  { name: 'created_to', in: 'query', schema: { type: 'string', format: 'date-time' } },
];

export const listOf = (item: unknown) => ({
  type: 'object',
  required: ['data', 'has_more', 'next_cursor'],
  properties: {
    data: { type: 'array', items: item },
    has_more: { type: 'boolean' },
    next_cursor: { type: ['string', 'null'] },
  },
});
