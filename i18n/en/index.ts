// The English catalogue: the surfaces' files together. English defines the keys (catalogue.ts).
import { common } from './common.ts';
import { dashboard } from './dashboard.ts';

export const en = { ...common, ...dashboard } as const;
