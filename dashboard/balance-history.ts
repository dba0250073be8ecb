// The home page's balance over time: each currency's closing balances of the last 30 days, from the
// same source and rule as GET /wallets?as_of= (projections/wallet-history.ts): a day's closing is
// the balance as of the next day's first instant (UTC); today's so far, every movement until now.
import type { ApiServices } from '../api/services.ts';
import { balancesAsOf } from '../projections/wallet-history.ts';

export const CHART_DAYS = 30;
export const CHART_CURRENCIES = ['XAF', 'XOF'] as const;

export interface DailyClosing {
  /** The day, YYYY-MM-DD (UTC). */
  day: string;
  available: string;
  reserved: string;
}

const DAY_MS = 86_400_000;

export async function dailyClosings(s: ApiServices, merchantId: string, currency: string, now: Date): Promise<DailyClosing[]> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const out: DailyClosing[] = [];
  for (let i = CHART_DAYS - 1; i >= 0; i--) {
    const dayStart = today - i * DAY_MS;
    const b = await balancesAsOf(s.knex, merchantId, currency, new Date(dayStart + DAY_MS));
    out.push({ day: new Date(dayStart).toISOString().slice(0, 10), available: b.available, reserved: b.reserved });
  }
  return out;
}
