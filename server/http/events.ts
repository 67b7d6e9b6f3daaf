// The change feed as server-sent events: `GET /sheets/crm/events` (every tab the key may read) or
// `GET /sheets/crm/tabs/Orders/events` (one tab) -> `text/event-stream`, each event as
// `id: 1718000000000-4`, `event: rows.created`, `data: {...}`, a comment every 15 s so proxies
// keep the connection. `Last-Event-ID: 1718000000000-3` (or `?lastEventId=`, for a first
// connection, which EventSource cannot give a header) -> exactly the events after it first;
// an id no longer kept (or unknown) -> `event: reset`: read again, then the stream goes on.
// app.ts sends such a request here after the key, the rate limit and the quota (counted once per
// stream opened); the listeners send the stream as it is written (runtime/node.ts, respond.ts).
import { findTab, servedWorkbook } from '../../lib/engine.ts';
import { apiError, isApiError } from '../../lib/errors.ts';
import { isCacheBuster } from '../../lib/parse-request.ts';
import type { Connection } from '../connections.ts';
import { compareEventIds, type Unsubscribe } from '../feed/event-log.ts';
import type { FeedEvent } from '../feed/event.ts';
import type { Feed } from '../feed/feed.ts';
import type { IncomingRequest } from './request.ts';
import { errorAnswer, type Answer } from './respond.ts';

export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Chunks a client may fall behind by before its stream is ended (it resumes with Last-Event-ID). */
const MAX_QUEUED = 2_000;
const METHODS = 'GET, HEAD';
const PARAMETERS = ['lastEventId'];

export interface EventsSettings {
  readonly feed: Feed;
  /** How often a comment line goes out on an idle stream (default 15 s). */
  readonly heartbeatMs?: number;
}

/** Whether the request is for a change feed: `/sheets/{id}/events` or `/sheets/{id}/tabs/{Tab}/events`; a cheap test first. */
export function isEventsRequest(url: string): boolean {
  return url.includes('/events') && eventsPath(new URL(url, 'http://sheetrest.invalid').pathname) !== undefined;
}

/** `/sheets/crm/events` -> { tab: null }; `/sheets/crm/tabs/Orders/events` -> { tab: 'Orders' }; anything else undefined. */
export function eventsPath(pathname: string): { readonly tab: string | null } | undefined {
  const segments = (pathname.endsWith('/') ? pathname.slice(0, -1) : pathname).split('/');
  if (segments[1] !== 'sheets' || segments[2] === '' || segments.at(-1) !== 'events') return undefined;
  if (segments.length === 4) return { tab: null };
  if (segments.length !== 6 || segments[3] !== 'tabs' || segments[4] === '') return undefined;
  try {
    return { tab: decodeURIComponent(segments[4]) };
  } catch {
    return undefined;
  }
}

/** Whether an answer is an event stream's (its caching is always no-store). */
export function isEventStreamAnswer(answer: Answer): boolean {
  return answer.headers['Content-Type'] === EVENT_STREAM_TYPE;
}

/** The stream's answer; `connection` as the caller's key sees it (its `visibleTabs`). */
export async function answerEvents(settings: EventsSettings, connection: Connection, request: IncomingRequest): Promise<Answer> {
  if (request.method === 'OPTIONS') return { status: 204, headers: { Allow: METHODS }, body: '' };
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return errorAnswer(apiError('method_not_allowed', `${request.method} is not accepted here; the change feed takes ${METHODS}.`, { Allow: METHODS }));
  }
  const url = new URL(request.url, 'http://sheetrest.invalid');
  // A cache-buster (`_=1700000000`) is taken and ignored here too, as on every path (lib/parse-request.ts).
  const unknown = [...url.searchParams.keys()].find((name) => !PARAMETERS.includes(name) && !isCacheBuster(name));
  if (unknown !== undefined) return errorAnswer(apiError('invalid_parameter', `Unknown parameter "${unknown}" for the change feed; it takes ${PARAMETERS.join(', ')} (or the Last-Event-ID header) and a cache-buster named _, as _=1700000000.`));
  const { tab } = eventsPath(url.pathname)!;
  // The tabs the caller may see now: a key's tabs, not hidden ones where the connection hides them.
  const served = servedWorkbook(await connection.source.read(tab === null ? {} : { tab }), connection.engine);
  if (tab !== null) {
    const found = findTab(served, tab);
    if (isApiError(found)) return errorAnswer(found);
  }
  const visible = connection.engine.visibleTabs;
  const hidden = new Set(connection.engine.hiddenTabs === 'hide' ? (await connection.source.read()).tabs.filter((each) => each.visibility !== undefined).map((each) => each.name) : []);
  const shown = (event: FeedEvent) => (tab === null || event.tab === tab) && (visible === undefined || visible.includes(event.tab)) && !hidden.has(event.tab);
  // Streams with the same view get the same events: one chunk per tick for all of them.
  const view = JSON.stringify([connection.id, tab, visible ?? null, [...hidden].sort()]);
  const headers = { 'Content-Type': EVENT_STREAM_TYPE, 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };
  if (request.method === 'HEAD') return { status: 200, headers, body: '' };
  const resumeFrom = request.headers.get('last-event-id') ?? url.searchParams.get('lastEventId');
  return { status: 200, headers, body: '', stream: await eventStream(settings, connection, resumeFrom === '' ? null : resumeFrom, shown, view) };
}

const encoder = new TextEncoder();

/** `id: ...\nevent: rows.created\ndata: {...}\n\n`: JSON has no line breaks, so one data line. */
function eventText(event: FeedEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Each live event encoded once for every stream that sends it (100 streams: one JSON text, not 100). */
const encodedEvents = new WeakMap<FeedEvent, Uint8Array>();

function encodedEvent(event: FeedEvent): Uint8Array {
  let bytes = encodedEvents.get(event);
  if (bytes === undefined) encodedEvents.set(event, (bytes = encoder.encode(eventText(event))));
  return bytes;
}

/**
 * Views with live events waiting, sent together SEND_EVERY_MS after the first of them: the
 * write that made them is answered first, and a stream gets one chunk (one socket write) for the
 * events of many writes. Sent in the same turn, 100 streams under 1,000 writes a second cost
 * 100,000 socket writes a second: a paired POST rate of 0.66x no feed on Node; every 20 ms,
 * 0.71x; every 100 ms, 0.84x (bench/feed.ts, docs/benchmarks.md). An event waits at most this long.
 */
const SEND_EVERY_MS = 100;

/**
 * The streams that see the same events (one connection, tab and set of tabs the key sees): one
 * listener on the feed for all of them, so an event costs one test and one push however many
 * streams watch, and each tick's chunk is made once and the same bytes go to every stream.
 */
interface View {
  readonly key: string;
  readonly shown: (event: FeedEvent) => boolean;
  /** Live streams, each with where its share of `events` starts (0 but for a stream that went live since the last chunk). */
  readonly streams: Map<Member, number>;
  /** Streams still replaying what they missed: the view's events are kept for each meanwhile. */
  readonly joining: Set<Member>;
  /** Shown events since the last chunk. */
  events: FeedEvent[];
  unsubscribe: Unsubscribe;
}

/** A stream as its view sends to it. */
interface Member {
  readonly sendBytes: (bytes: Uint8Array) => void;
  /** Events kept while it joins (its replay runs). */
  readonly buffered: FeedEvent[];
  /** The feed ended (the connection closes): after the view's last chunk. */
  readonly end: () => void;
}

const views = new WeakMap<Connection, Map<string, Promise<View>>>();
const waitingViews = new Set<View>();
let sendTimer: ReturnType<typeof setTimeout> | null = null;

function sendSoon(view: View): void {
  waitingViews.add(view);
  sendTimer ??= setTimeout(sendWaiting, SEND_EVERY_MS);
}

function sendWaiting(): void {
  sendTimer = null;
  const due = [...waitingViews];
  waitingViews.clear();
  for (const view of due) flush(view);
}

/** The view's events since its last chunk to each of its live streams: one chunk for all (a stream that went live meanwhile gets its share). */
function flush(view: View): void {
  const { events } = view;
  if (events.length === 0) return;
  view.events = [];
  let whole: Uint8Array | null = null;
  for (const [stream, from] of view.streams) {
    if (from > 0) view.streams.set(stream, 0);
    if (from >= events.length) continue;
    stream.sendBytes(from === 0 ? (whole ??= joined(events.map(encodedEvent))) : joined(events.slice(from).map(encodedEvent)));
  }
}

/** The view `key` of `connection`, its one listener subscribed on first need. */
function viewOf(feed: Feed, connection: Connection, key: string, shown: (event: FeedEvent) => boolean): Promise<View> {
  let byKey = views.get(connection);
  if (byKey === undefined) views.set(connection, (byKey = new Map()));
  let opening = byKey.get(key);
  if (opening !== undefined) return opening;
  const view: View = { key, shown, streams: new Map(), joining: new Set(), events: [], unsubscribe: () => undefined };
  const listener = (event: FeedEvent) => {
    if (!shown(event)) return;
    for (const member of view.joining) member.buffered.push(event);
    if (view.streams.size === 0) return;
    view.events.push(event);
    sendSoon(view);
  };
  const ended = () => {
    flush(view);
    for (const member of [...view.streams.keys(), ...view.joining]) member.end();
  };
  opening = feed.listen(connection, listener, ended).then((unsubscribe) => {
    view.unsubscribe = unsubscribe;
    return view;
  });
  byKey.set(key, opening);
  // A failed subscription is not kept: the next stream tries again.
  opening.catch(() => byKey.delete(key));
  return opening;
}

/** A stream leaves its view; the last one out unsubscribes it. */
function leave(connection: Connection, view: View, member: Member): void {
  view.streams.delete(member);
  view.joining.delete(member);
  if (view.streams.size > 0 || view.joining.size > 0) return;
  waitingViews.delete(view);
  view.unsubscribe();
  const byKey = views.get(connection);
  if (byKey !== undefined) {
    byKey.delete(view.key);
    if (byKey.size === 0) views.delete(connection);
  }
}

/** Every stream's heartbeat, one timer per interval rather than one per stream. */
const heartbeats = new Map<number, { readonly timer: ReturnType<typeof setInterval>; readonly beats: Set<() => void> }>();

function onHeartbeat(everyMs: number, beat: () => void): () => void {
  let entry = heartbeats.get(everyMs);
  if (entry === undefined) {
    const beats = new Set<() => void>();
    const timer = setInterval(() => {
      for (const each of [...beats]) each();
    }, everyMs);
    timer.unref?.();
    heartbeats.set(everyMs, (entry = { timer, beats }));
  }
  const { beats, timer } = entry;
  beats.add(beat);
  return () => {
    beats.delete(beat);
    if (beats.size > 0 || heartbeats.get(everyMs)?.beats !== beats) return;
    clearInterval(timer);
    heartbeats.delete(everyMs);
  };
}

/** The chunks as one (a copy only when there are several). */
function joined(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

function resetText(latest: string | null, reason: string): string {
  // The reset carries the newest id, so the client's next reconnection resumes after it.
  return `${latest === null ? '' : `id: ${latest}\n`}event: reset\ndata: ${JSON.stringify({ type: 'reset', reason, latest })}\n\n`;
}

/**
 * Joins its view first and buffers, then replays what the client missed, then sends the
 * buffered events newer than the replay and goes live: nothing falls between the replay and the
 * live events.
 */
async function eventStream(settings: EventsSettings, connection: Connection, resumeFrom: string | null, shown: (event: FeedEvent) => boolean, key: string): Promise<ReadableStream<Uint8Array>> {
  const { feed } = settings;
  const view = await viewOf(feed, connection, key, shown);
  let sendBytes: (bytes: Uint8Array) => void = () => undefined;
  let end: () => void = () => undefined;
  const member: Member = { sendBytes: (bytes) => sendBytes(bytes), buffered: [], end: () => end() };
  view.joining.add(member);
  let opening: string;
  let after: string | null;
  try {
    if (resumeFrom === null) {
      opening = '';
      after = null;
    } else {
      const replay = await feed.events.after(connection.id, resumeFrom);
      if ('reset' in replay) {
        opening = resetText(replay.latest, `The event ${JSON.stringify(resumeFrom.slice(0, 40))} is no longer kept (the feed keeps the last 10,000 events of 24 hours) or was never given: read the rows again.`);
        after = replay.latest;
      } else {
        opening = replay.events.filter(shown).map(eventText).join('');
        after = replay.events.at(-1)?.id ?? resumeFrom;
      }
    }
  } catch (error) {
    leave(connection, view, member);
    throw error;
  }
  let stopHeartbeat = () => undefined as void;
  let finished = false;
  const stop = () => {
    if (finished) return;
    finished = true;
    stopHeartbeat();
    leave(connection, view, member);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      sendBytes = (bytes: Uint8Array) => {
        if (finished) return;
        controller.enqueue(bytes);
        if ((controller.desiredSize ?? 0) < -MAX_QUEUED) {
          controller.enqueue(encoder.encode(': this client fell too far behind; reconnect with Last-Event-ID\n\n'));
          stop();
          controller.close();
        }
      };
      const send = (text: string) => sendBytes(encoder.encode(text));
      end = () => {
        if (finished) return;
        stop();
        controller.close();
      };
      // A first line at once: every runtime then sends the head, and the client knows it is connected.
      send(`: sheetrest change feed of ${connection.id}\n\n` + opening);
      const newer = (event: FeedEvent) => after === null || compareEventIds(event.id, after) > 0;
      for (const event of member.buffered.splice(0)) if (newer(event)) send(eventText(event));
      // Live from here: the view's next chunk, from the events after this point.
      view.joining.delete(member);
      if (!finished) view.streams.set(member, view.events.length);
      stopHeartbeat = onHeartbeat(settings.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, () => send(': keep-alive\n\n'));
    },
    cancel() {
      stop();
    },
  });
}
