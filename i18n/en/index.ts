// The English catalogue: the surfaces' files together. English defines the keys (catalogue.ts).
import { common } from './common.ts';

export const en = { ...common } as const;
