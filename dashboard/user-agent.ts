// A session's device in a few words, from the User-Agent its browser sent at sign-in: the browser and
// the system, as a member recognises them ("Firefox", "Android"), never the raw header (long, and
// written for servers). Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari", and
// Android says "Linux".

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(?:Headless)?Chrome\/|\bCriOS\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[0-9.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
];

const SYSTEMS: Array<[RegExp, string]> = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

const first = (table: Array<[RegExp, string]>, ua: string) => table.find(([re]) => re.test(ua))?.[1];

/** The browser and system a User-Agent names; undefined for what it does not say (or no header at all). */
export function deviceOf(userAgent: string | null | undefined): { browser: string | undefined; system: string | undefined } {
  const ua = userAgent ?? '';
  return { browser: first(BROWSERS, ua), system: first(SYSTEMS, ua) };
}
