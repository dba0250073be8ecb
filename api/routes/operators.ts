// GET /operators (CONTRACT.md §8): the merchant's active configuration, from the same catalogue
// that validates quotes.
import type { ApiModule } from '../module.ts';
import { errors, json } from '../openapi/common.ts';
import { OPERATORS, MIN_AMOUNT, MAX_AMOUNT, parseCorridor } from '../../domain/catalogue.ts';
import type { Routing } from '../../domain/merchant.ts';

export const operatorsModule: ApiModule = {
  schemas: {
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
        kyc_required: { type: 'boolean' }, availability: { type: 'string', enum: ['available', 'unavailable'] },
      },
    },
  },
  paths: {
    '/operators': {
      get: {
        'x-auth': 'merchant', tags: ['Catalogue'], operationId: 'listOperators',
        summary: 'Operators enabled for this merchant, with flows, limits, OTP and availability',
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Operator' } } } }), 401: errors[401] },
      },
    },
  },
  handlers: {
    listOperators: async (ctx) => {
      const row = await ctx.services.knex('merchants').where({ id: ctx.merchantId }).first('routing');
      const routing = row.routing as Routing;
      const corridorCountries = new Set(routing.corridors.flatMap((c) => {
        const p = parseCorridor(c);
        return p ? [p.from, p.to] : [];
      }));
      const data = OPERATORS.flatMap((o) => {
        const flows: string[] = [];
        if (routing.payin_operators.includes(o.code)) flows.push('payin');
        if (routing.payout_operators.includes(o.code)) flows.push('payout');
        if (corridorCountries.has(o.country)) flows.push('transfer');
        if (flows.length === 0) return [];
        return [{
          operator_code: o.code, name: o.name, country_code: o.country, currency: o.currency, rail_type: o.railType,
          flows, min_amount: MIN_AMOUNT.toString(), max_amount: MAX_AMOUNT.toString(), requires_otp: o.requiresOtp,
          kyc_required: routing.kyc_required_operators.includes(o.code), availability: 'available',
        }];
      });
      return { status: 200, body: { data } };
    },
  },
};
