// The English catalogue: the surfaces' files together. English defines the keys (catalogue.ts).
import { common } from './common.ts';
import { dashboard } from './dashboard.ts';
import { pay } from './pay.ts';
import { audit } from './audit.ts';
import { team } from './team.ts';
import { twoFactor } from './two-factor.ts';

export const en = { ...common, ...dashboard, ...pay, ...audit, ...team, ...twoFactor } as const;
