// Logs readable in a terminal (issue 31): pretty lines when the output is a TTY, JSON lines otherwise,
// and LOG_FORMAT=json|pretty overrides either way. Redaction holds in both.
import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger, type LogFormat } from '../infra/log.ts';
import { loadConfig, ConfigError } from '../infra/config.ts';

/** What a logger writes to an output that is (or is not) a terminal. */
function written(format: LogFormat | undefined, isTTY: boolean): string {
  let text = '';
  const out = Object.assign(new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } }), { isTTY });
  const log = createLogger('info', out, format);
  log.info({ payin_id: 'p-1', api_secret: 'sk_live_abc' }, 'payin created');
  log.debug('routine');
  return text;
}

const isJson = (text: string) => text.trim().split('\n').every((line) => {
  try { return typeof JSON.parse(line) === 'object'; } catch { return false; }
});

t.test('auto: pretty at a terminal, JSON lines into a pipe or a file', async (t) => {
  const tty = written('auto', true);
  t.notOk(isJson(tty), 'not JSON at a terminal');
  const plain = tty.replace(/\u001b\[[0-9;]*m/g, '');
  t.match(tty, /\u001b\[/, 'coloured at a terminal');
  t.match(plain, /INFO.*payin created/);
  t.match(plain, /payin_id: "p-1"/);
  const piped = written('auto', false);
  t.ok(isJson(piped), 'JSON lines when not a terminal');
  t.match(JSON.parse(piped), { level: 30, msg: 'payin created', payin_id: 'p-1' });
});

t.test('LOG_FORMAT overrides the terminal check both ways', async (t) => {
  t.ok(isJson(written('json', true)), 'json at a terminal');
  const pretty = written('pretty', false);
  t.notOk(isJson(pretty), 'pretty into a pipe');
  t.match(pretty, /payin created/);
  t.notMatch(pretty, /\u001b\[/, 'no colour codes when the output is not a terminal');
  t.ok(isJson(written(undefined, true)), 'a logger given a stream and no format writes JSON (tests capture lines)');
});

t.test('secrets are redacted in both formats; the level still filters', async (t) => {
  for (const format of ['json', 'pretty'] as const) {
    const text = written(format, true);
    t.notMatch(text, 'sk_live_abc', `${format}: no secret`);
    t.match(text, '[redacted]', `${format}: marked redacted`);
    t.notMatch(text, 'routine', `${format}: debug lines below info are dropped`);
  }
});

t.test('LOG_FORMAT is read once by the configuration: auto by default, json or pretty, nothing else', async (t) => {
  t.equal(loadConfig({}, []).logFormat, 'auto');
  t.equal(loadConfig({ LOG_FORMAT: 'json' }, []).logFormat, 'json');
  t.equal(loadConfig({ LOG_FORMAT: 'Pretty' }, []).logFormat, 'pretty');
  t.throws(() => loadConfig({ LOG_FORMAT: 'xml' }, []), { name: 'Error', message: /LOG_FORMAT must be auto, json or pretty/ });
  t.ok((() => { try { loadConfig({ LOG_FORMAT: 'xml' }, []); } catch (err) { return err instanceof ConfigError; } return false; })(), 'a ConfigError (the service exits with 2)');
});
