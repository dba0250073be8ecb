// Puts each operation's examples (examples/operations.ts) on its JSON request body and its success
// answer, on copies: modules share response objects between operations (one `created` for three quote
// operations), so writing into them would give all three the last one's example.
import type { OperationExample } from './examples/operations.ts';

type Media = Record<string, Record<string, unknown>>;
interface Described { content?: Media; [k: string]: unknown }

function withExample(part: Described | undefined, example: unknown, only?: string): Described | undefined {
  if (!part?.content || example === undefined) return part;
  const [type] = Object.keys(part.content).filter((t) => !only || t === only);
  if (!type) return part;
  return { ...part, content: { ...part.content, [type]: { ...part.content[type], example } } };
}

/** The operation with its request example (JSON bodies) and its first success answer's example. */
export function withExamples<Op extends { requestBody?: unknown; responses: Record<string, unknown> }>(op: Op, ex: OperationExample | undefined): Op {
  if (!ex) return op;
  const success = Object.keys(op.responses).find((s) => s.startsWith('2'));
  return {
    ...op,
    ...(op.requestBody ? { requestBody: withExample(op.requestBody as Described, ex.request, 'application/json') } : {}),
    responses: success ? { ...op.responses, [success]: withExample(op.responses[success] as Described, ex.response) } : op.responses,
  };
}
