/** A quoted SQL identifier. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
