// GET /operators (CONTRACT.md §8): the merchant's active configuration, from the same catalogue
// that validates quotes, with each operator's availability per flow as it is now (§14: the
// operator's stream read, the same state quotes and payments decide with).
import type { ApiModule } from '../module.ts';
import { errors, json } from '../openapi/common.ts';
import { COUNTRIES, OPERATORS, MIN_AMOUNT, MAX_AMOUNT, parseCorridor } from '../../domain/catalogue.ts';
import type { Routing } from '../../domain/merchant.ts';
import type { Ctx } from '../module.ts';
import { operatorAvailability } from '../../commands/operator-availability.ts';
import { AVAILABILITIES } from '../../domain/operator-availability.ts';

async function routingOf(ctx: Ctx): Promise<Routing> {
  const row = await ctx.services.knex('merchants').where({ id: ctx.merchantId }).first('routing');
  return row.routing as Routing;
}

/** A corridor as the merchant quotes it: both ends, and the operators a transfer quote may name on each. */
function corridorView(code: string) {
  const p = parseCorridor(code);
  if (!p) return [];
  const codesIn = (country: string) => OPERATORS.filter((o) => o.country === country).map((o) => o.code);
  return [{
    corridor_code: code,
    payer_country_code: p.from, payer_currency: COUNTRIES[p.from].currency,
    recipient_country_code: p.to, recipient_currency: COUNTRIES[p.to].currency,
    payer_operators: codesIn(p.from), recipient_operators: codesIn(p.to),
  }];
}

export const operatorsModule: ApiModule = {
  schemas: {
    Corridor: {
      type: 'object',
      required: ['corridor_code', 'payer_country_code', 'payer_currency', 'recipient_country_code', 'recipient_currency', 'payer_operators', 'recipient_operators'],
      properties: {
        corridor_code: { type: 'string', description: '<payer_country>-<recipient_country>-<payer_currency>-<recipient_currency>', examples: ['CM-SN-XAF-XOF'] },
        payer_country_code: { type: 'string' }, payer_currency: { type: 'string' },
        recipient_country_code: { type: 'string' }, recipient_currency: { type: 'string' },
        payer_operators: { type: 'array', items: { type: 'string' } }, recipient_operators: { type: 'array', items: { type: 'string' } },
      },
    },
    FlowAvailability: {
      type: 'object',
      description:
        'Per flow: `operational`, `delayed` (accepted; payments may settle late; quotes say operator_availability ' +
        '`delayed`) or `closed` (new quotes and payments refused with 400 operator_unavailable; payments already made still settle). ' +
        'A transfer collects through its payer\'s operator (payin) and pays out through its recipient\'s (payout).',
      required: ['payin', 'payout'],
      properties: { payin: { type: 'string', enum: [...AVAILABILITIES] }, payout: { type: 'string', enum: [...AVAILABILITIES] } },
    },
    Operator: {
      type: 'object',
      required: [
        'operator_code', 'name', 'country_code', 'currency', 'rail_type', 'flows', 'min_amount', 'max_amount', 'requires_otp', 'kyc_required', 'availability',
      ],
      properties: {
        operator_code: { type: 'string' }, name: { type: 'string' }, country_code: { type: 'string' },
        currency: { type: 'string' }, rail_type: { type: 'string' },
        flows: { type: 'array', items: { type: 'string', enum: ['payin', 'payout', 'transfer'] } },
        min_amount: { type: 'string' }, max_amount: { type: 'string' }, requires_otp: { type: 'boolean' },
        kyc_required: { type: 'boolean' }, availability: { $ref: '#/components/schemas/FlowAvailability' },
      },
    },
  },
  paths: {
    '/corridors': {
      get: {
        'x-auth': 'merchant', tags: ['Catalogue'], 'x-scope': 'any', operationId: 'listCorridors',
        summary: 'The transfer corridors enabled for this merchant',
        description:
          'A transfer quote succeeds only on an enabled corridor (else 400 corridor_not_configured). Each corridor names ' +
          'its payer and recipient countries and currencies, and the operators a quote may name on each side. ' +
          'The operator enables or disables one with PUT or DELETE /admin/merchants/{merchant_id}/corridors/{corridor_code}.',
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Corridor' } } } }), 401: errors[401] },
      },
    },
    '/operators': {
      get: {
        'x-auth': 'merchant', tags: ['Catalogue'], 'x-scope': 'any', operationId: 'listOperators',
        summary: 'Operators enabled for this merchant, with flows, limits, OTP and availability',
        description: 'An operator shows the flow transfer when a corridor enabled for this merchant starts or ends in its country; ' +
          'the corridors themselves, with the operators of each side, are at GET /corridors. availability is per flow, as it is ' +
          'now (the operator sets it with PUT /admin/operators/{operator_code}/availability).',
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Operator' } } } }), 401: errors[401] },
      },
    },
  },
  handlers: {
    listCorridors: async (ctx) => ({ status: 200, body: { data: (await routingOf(ctx)).corridors.flatMap(corridorView) } }),
    listOperators: async (ctx) => {
      const routing = await routingOf(ctx);
      const corridorCountries = new Set(routing.corridors.flatMap((c) => {
        const p = parseCorridor(c);
        return p ? [p.from, p.to] : [];
      }));
      const shown = OPERATORS.flatMap((o) => {
        const flows: string[] = [];
        if (routing.payin_operators.includes(o.code)) flows.push('payin');
        if (routing.payout_operators.includes(o.code)) flows.push('payout');
        if (corridorCountries.has(o.country)) flows.push('transfer');
        if (flows.length === 0) return [];
        return [{ o, flows }];
      });
      const data = await Promise.all(shown.map(async ({ o, flows }) => {
        const { payin, payout } = await operatorAvailability(ctx.services, o.code);
        return {
          operator_code: o.code, name: o.name, country_code: o.country, currency: o.currency, rail_type: o.railType,
          flows, min_amount: MIN_AMOUNT.toString(), max_amount: MAX_AMOUNT.toString(), requires_otp: o.requiresOtp,
          kyc_required: routing.kyc_required_operators.includes(o.code), availability: { payin, payout },
        };
      }));
      return { status: 200, body: { data } };
    },
  },
};
