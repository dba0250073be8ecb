// GET /metrics, the Prometheus metrics of this process, served by every role: a worker counts what
// only it does (the provider gateway's calls, the webhook deliveries), so a split deployment is
// scraped per process. It takes the operator token (Bearer ADMIN_TOKEN): request rates, payment
// volumes and backlogs are the operator's information, not the public's.
import type { ApiModule } from '../module.ts';
import { errors } from '../openapi/common.ts';

export const metricsModule: ApiModule = {
  paths: {
    '/metrics': {
      get: {
        'x-auth': 'admin', tags: ['Operations'], operationId: 'metrics', summary: 'Prometheus metrics (text exposition format)',
        description: 'Prometheus text of this process: request rates and latencies, payment volumes, provider calls, backlogs (webhooks, jobs, projections).',
        responses: { 200: { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } }, 401: errors[401] },
      },
    },
  },
  handlers: {
    metrics: async (ctx) => {
      const m = await ctx.services.metrics.render(ctx.log);
      return { status: 200, text: m.text, contentType: m.contentType };
    },
  },
};
