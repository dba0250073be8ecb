// The French catalogue: each surface's file has the English file's keys, exactly (catalogue.ts).
import { common } from './common.ts';
import { dashboard } from './dashboard.ts';
import { pay } from './pay.ts';
import { audit } from './audit.ts';
import { team } from './team.ts';
import { twoFactor } from './two-factor.ts';

export const fr = { ...common, ...dashboard, ...pay, ...audit, ...team, ...twoFactor };
