// An event as the forwarder publishes it on the bus (workers/event-forwarder.ts), and the subject it
// is published under: what every bus consumer reads.
export interface ForwardedEvent {
  id: string;
  stream_id: string;
  version: number;
  position: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: string;
}

export const subjectOf = (type: string) => `events.${type}`;
