// A faithful transcription of seed 001 (the TypeScript edition of the API tool-call design) into
// plain ES2022 JavaScript, runnable by Node 20 without a build step, with its own types.
//
// It mirrors examples/seed000_handler.py (the transcription of seed 000): the same interpretive
// choices where both seeds leave something unwritten, and the seed's own code, defects included,
// where the seed writes it. Seed 001 differs from seed 000 in the places marked "SEED 001:".
// Nothing here is fixed.
//
// Why JavaScript and not TypeScript: every construct seed 001 uses at run time (`??`, `?.`,
// `Map`, `JSON.parse`, truthiness) is JavaScript; type annotations, the `!` non-null assertion and
// `abstract` are erased by tsc and change nothing at run time. Node 20 cannot run .ts without a
// loader (type stripping arrived in Node 22.6), and a pinned tsc/tsx would add a build step or
// ~0.3 s of start-up per run and a dependency, for no behavioural difference. Types are kept as
// JSDoc so the file can still be checked with `tsc --checkJs` if wanted.
//
// Chunks are plain objects read by property, exactly as the seed does: `content`, `tool_calls`
// with `index` / `call_id` / `name` / `arguments_delta` (the seed's ToolCallDelta uses snake_case
// field names, section 4.1). `reasoning`, `is_complete`, `error` and `finish_reason` are ignored,
// as in the seed.
//
// Run it through the suite (the last lines of this file serve the bridge protocol when it is the
// script Node was started with):
//
//   toolcall-conformance run --bridge "node examples/bridge/seed001_handler.mjs"

import { randomUUID } from 'node:crypto';
import { isMain, serveHandler } from './tcc_bridge.mjs';

/** @enum {string} */
export const SegmentEventType = Object.freeze({
  START: 'SEGMENT_START',
  CONTENT: 'SEGMENT_CONTENT',
  END: 'SEGMENT_END',
});

/** @enum {string} */
export const SegmentType = Object.freeze({
  TEXT: 'text',
  TOOL_CALL: 'tool_call',
});

/**
 * @typedef {{ index: number, call_id?: string | null, name?: string | null,
 *             arguments_delta?: string | null }} ToolCallDelta            (seed 001 section 4.1)
 * @typedef {{ content: string, reasoning?: string | null, is_complete?: boolean,
 *             tool_calls?: ToolCallDelta[] | null }} ChunkResponse         (seed 001 section 4.2)
 * @typedef {{ segmentId: string, name: string, accumulatedArgs: string }} ToolCallState
 */

export class SegmentEvent {
  /**
   * Seed 001 constructs END events with `new SegmentEvent({ event_type, segment_id, payload })`.
   * @param {{ event_type: string, segment_id: string, segment_type?: string | null,
   *           payload?: Record<string, any> }} data
   */
  constructor({ event_type, segment_id, segment_type = null, payload = {} }) {
    this.event_type = event_type;
    this.segment_id = segment_id;
    this.segment_type = segment_type;
    this.payload = payload;
  }

  /** `SegmentEvent.start(id, type, metadata)` as called by seed 001 section 6. */
  static start(segmentId, segmentType, metadata = {}) {
    return new SegmentEvent({
      event_type: SegmentEventType.START,
      segment_id: segmentId,
      segment_type: segmentType,
      payload: { metadata },
    });
  }

  // The seed calls `SegmentEvent.content(id, delta)` and `SegmentEvent.end(id)` without a segment
  // type. Like seed000_handler.py, this transcription gives CONTENT and END events the type of
  // their segment (the third argument below): both seeds leave the helpers unwritten, and the
  // adapter needs the type to recognise a tool END.
  static content(segmentId, delta, segmentType = null) {
    return new SegmentEvent({
      event_type: SegmentEventType.CONTENT,
      segment_id: segmentId,
      segment_type: segmentType,
      payload: { delta },
    });
  }

  static end(segmentId, metadata = {}, segmentType = null) {
    return new SegmentEvent({
      event_type: SegmentEventType.END,
      segment_id: segmentId,
      segment_type: segmentType,
      payload: { metadata },
    });
  }

  toJSON() {
    return {
      event_type: this.event_type,
      segment_id: this.segment_id,
      segment_type: this.segment_type,
      payload: this.payload,
    };
  }
}

export class ToolInvocation {
  /** @param {string} id @param {string} name @param {any} args */
  constructor(id, name, args) {
    this.id = id;
    this.name = name;
    this.arguments = args;
  }
}

/**
 * Seed 001 section 3.2 / 6b: invocations from END events; the id is the segment id.
 * Same shape as seed000_handler.py's adapter (START metadata remembered per segment, the name from
 * END metadata or else START metadata, an invocation when END metadata carries `arguments`).
 */
export class ToolInvocationAdapter {
  constructor() {
    /** @type {Map<string, Record<string, any>>} */
    this.starts = new Map();
  }

  /** @param {SegmentEvent} event @returns {ToolInvocation | null} */
  processEvent(event) {
    if (event.segment_type !== SegmentType.TOOL_CALL) {
      return null;
    }
    const metadata = event.payload.metadata ?? {};
    if (event.event_type === SegmentEventType.START) {
      this.starts.set(event.segment_id, metadata);
      return null;
    }
    if (event.event_type !== SegmentEventType.END) {
      return null;
    }
    const start = this.starts.get(event.segment_id) ?? {};
    // Python `a or b` is JavaScript `a || b` (both test truthiness).
    const name = metadata.tool_name || start.tool_name;
    if ('arguments' in metadata) {
      return new ToolInvocation(event.segment_id, name, metadata.arguments);
    }
    return null;
  }
}

/** Seed 001 section 5.1. */
export class StreamingResponseHandler {
  feed(_chunk) { throw new Error('abstract'); }
  finalize() { throw new Error('abstract'); }
  getAllInvocations() { throw new Error('abstract'); }
  getAllEvents() { throw new Error('abstract'); }
  reset() { throw new Error('abstract'); }
}

/** Seed 001 section 6 (with the internal adapter of section 3.2). */
export class ApiToolCallStreamingResponseHandler extends StreamingResponseHandler {
  /**
   * Seed 001 shows no constructor; its factory (section 9) passes `onSegmentEvent` and
   * `onToolInvocation`, and the prefix comes from seed 000's constructor.
   * @param {{ onSegmentEvent?: (e: SegmentEvent) => void,
   *           onToolInvocation?: (i: ToolInvocation) => void,
   *           segmentIdPrefix?: string }} [options]
   */
  constructor({ onSegmentEvent, onToolInvocation, segmentIdPrefix = '' } = {}) {
    super();
    this.onSegmentEvent = onSegmentEvent;
    this.onToolInvocation = onToolInvocation;
    this.segmentIdPrefix = segmentIdPrefix;
    /** @type {string | null} */
    this.textSegmentId = null;
    /** @type {Map<number, ToolCallState>} */
    this.activeTools = new Map();
    /** @type {SegmentEvent[]} */
    this.allEvents = [];
    /** @type {ToolInvocation[]} */
    this.allInvocations = [];
    this.adapter = new ToolInvocationAdapter();
    this.isFinalized = false;
  }

  generateId() {
    // seed 000: f"{prefix}{uuid.uuid4().hex}"
    return `${this.segmentIdPrefix}${randomUUID().replace(/-/g, '')}`;
  }

  /** @param {SegmentEvent} event */
  emit(event) {
    this.allEvents.push(event);
    // SEED 001: `this.onSegmentEvent?.(event);` with no try/catch, in section 3.2 and in section
    // 6 alike (seed 000 section 6 wraps the callback in try/except and logs).
    this.onSegmentEvent?.(event);

    const invocation = this.adapter.processEvent(event);
    if (invocation) {
      this.allInvocations.push(invocation);
      // Seed 001 never says where onToolInvocation is called; like seed000_handler.py, right
      // after the invocation is recorded, unguarded.
      this.onToolInvocation?.(invocation);
    }
  }

  /** @param {ChunkResponse} chunk @returns {SegmentEvent[]} */
  feed(chunk) {
    if (this.isFinalized) {
      throw new Error('Handler has been finalized.');
    }

    /** @type {SegmentEvent[]} */
    const events = [];

    // 1) Text content -> TEXT segment
    if (chunk.content) {
      // SEED 001: `if (!this.textSegmentId)` (seed 000: `is None`); ids are never '' here.
      if (!this.textSegmentId) {
        this.textSegmentId = this.generateId();
        const start = SegmentEvent.start(this.textSegmentId, SegmentType.TEXT);
        this.emit(start);
        events.push(start);
      }
      const content = SegmentEvent.content(this.textSegmentId, chunk.content, SegmentType.TEXT);
      this.emit(content);
      events.push(content);
    }

    // 2) API tool calls
    if (chunk.tool_calls) {
      for (const delta of chunk.tool_calls) {
        if (!this.activeTools.has(delta.index)) {
          // SEED 001: `??`, not Python's `or`: a call_id of '' becomes the segment id.
          const segId = delta.call_id ?? this.generateId();
          this.activeTools.set(delta.index, {
            segmentId: segId,
            name: delta.name ?? '',
            accumulatedArgs: '',
          });
          // SEED 001: `{ tool_name: delta.name }`: null stays null, an absent name is
          // `undefined` (a key JSON.stringify drops).
          const start = SegmentEvent.start(segId, SegmentType.TOOL_CALL, { tool_name: delta.name });
          this.emit(start);
          events.push(start);
        }

        const state = this.activeTools.get(delta.index);
        if (delta.arguments_delta) {
          state.accumulatedArgs += delta.arguments_delta;
          const content = SegmentEvent.content(state.segmentId, delta.arguments_delta, SegmentType.TOOL_CALL);
          this.emit(content);
          events.push(content);
        }
        // SEED 001: no "update name if provided later" step (seed 000 has one): a name that
        // arrives after the first delta of its index is never recorded.
      }
    }

    return events;
  }

  /** @returns {SegmentEvent[]} */
  finalize() {
    if (this.isFinalized) {
      return [];
    }
    this.isFinalized = true;
    /** @type {SegmentEvent[]} */
    const events = [];

    if (this.textSegmentId) {
      const end = SegmentEvent.end(this.textSegmentId, {}, SegmentType.TEXT);
      this.emit(end);
      events.push(end);
    }

    for (const state of this.activeTools.values()) {
      // SEED 001: JSON.parse with no try/catch (seed 000 catches JSONDecodeError and uses {}).
      // Malformed arguments throw a SyntaxError out of finalize(): the events already emitted
      // stay recorded, later tool calls get no END, and the handler is already finalized.
      const parsedArgs = state.accumulatedArgs ? JSON.parse(state.accumulatedArgs) : {};
      const end = new SegmentEvent({
        event_type: SegmentEventType.END,
        segment_id: state.segmentId,
        // Seed 001 passes no segment_type here; like seed000_handler.py, TOOL_CALL.
        segment_type: SegmentType.TOOL_CALL,
        payload: { metadata: { tool_name: state.name, arguments: parsedArgs } },
      });
      this.emit(end);
      events.push(end);
    }

    return events;
  }

  getAllEvents() {
    return [...this.allEvents];
  }

  /** Seed 001 section 3.2: `return [...this.allInvocations];` */
  getAllInvocations() {
    return [...this.allInvocations];
  }

  /**
   * Seed 001 writes no reset() (section 6 extends the abstract class of 5.1 without one). This is
   * seed 000's reset(), as in seed000_handler.py: invocations and the adapter are kept.
   */
  reset() {
    this.textSegmentId = null;
    this.activeTools.clear();
    this.allEvents.length = 0;
    this.isFinalized = false;
  }
}

/** Factory for the bridge: a fresh seed-001 handler. */
export function makeHandler(options = {}) {
  return new ApiToolCallStreamingResponseHandler(options);
}

/**
 * What the seed-001 design supports, declared to the suite in the hello message. The same
 * declaration as the documented seed-000 run (`--no-reasoning`): the seed reads no
 * `chunk.reasoning`. Like seed 000 it does not read `chunk.error` either, but it does not say so,
 * so the suite holds it to the stream-error rules, as it holds seed 000.
 */
export const CAPABILITIES = {
  reasoning: false,
  // JSON.parse gives IEEE doubles: an integer beyond 2**53 cannot survive, so the suite compares
  // this handler's arguments as doubles (docs/bridge.md, Numbers).
  json_numbers: 'double',
};

if (isMain(import.meta.url)) {
  await serveHandler(makeHandler, {
    target: { name: 'seed001 (examples/bridge/seed001_handler.mjs)', version: 'seed 001 section 6' },
    capabilities: CAPABILITIES,
  });
}
