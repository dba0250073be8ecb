// Values that have words in the catalogue (a status, an event type, an error code): the key for a
// value if the catalogue has one, so a value nobody named yet still shows, as itself.
import { catalogues, type MessageKey } from '../i18n/catalogue.ts';

export function keyFor(prefix: string, value: string): MessageKey | undefined {
  const key = `${prefix}${value}`;
  return key in catalogues().en ? (key as MessageKey) : undefined;
}
