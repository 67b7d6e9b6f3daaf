// Group commit of a Google spreadsheet's writes. A write arriving while none is in flight goes at
// once, alone (one request, no added wait); writes arriving while one is in flight queue, and
// when it ends they go together: planned in arrival order, each on the rows the ones before it
// leave (as the engine plans one write), cut into segments of one request each (segments.ts),
// and each client answered once Google confirmed the request holding its write, with its own
// result. 40 clients POSTing to `People` while one append is in flight -> the next request is one
// `values.append` of their 40 bodies' rows, and each gets its own 201.
// - A write Google refuses for its values (400) fails alone: the refused segment is halved until
//   the one write is found; it is answered with the error, the others are sent.
// - A segment whose answer was lost (timeout, reset, 5xx) is read back (read-back.ts) and sent
//   again only when it did not land.
// - With Redis, a batch runs under the spreadsheet's lease, taken once per batch (not per
//   write), the fence checked before each request, the shared version bumped per request.
// - A write reads its tab from Google at most once per batch, and only when planning on the
//   kept tab is not safe: a POST plans on the kept tab (an append lands after whatever is
//   there), a PATCH, DELETE, upsert or POST with an increment id on a tab read in this batch, under the lock (and lease), which only
//   this batch's own writes, applied to the kept tab as Google confirms them, have changed since.
import { isEmptyPlan, type WritePlan } from '../../../lib/write-plan.ts';
import { apiError, isApiError } from '../../../lib/errors.ts';
import { gridRows } from '../../../lib/rows.ts';
import type { Tab, Workbook } from '../../../lib/workbook.ts';
import type { Planned } from '../source.ts';
import type { SpreadsheetCoordination } from './shared-spreadsheet.ts';
import type { SheetsApi } from './client.ts';
import { hasFormula, quoteSheetName } from './encode-plan.ts';
import { landing } from './read-back.ts';
import { cellRequests } from './encode-cells.ts';
import { appendRequest, deleteRequest, headerRowOf, MAX_SEGMENT_WRITES, segmentOf, valuesRequest, type PlannedStep, type SegmentKind } from './segments.ts';
import { UNKNOWN_VERSION } from './tab-cache.ts';
import type { Scope, TabReader } from './tab-reader.ts';
import { describeFailure, type Repeatable } from './upstream.ts';
import { underWriteLock } from './write-lock.ts';

export interface CommitDeps {
  readonly reader: TabReader;
  readonly api: SheetsApi;
  /** Identifies the spreadsheet in this process: batches of every source on it run one at a time. */
  readonly lockKey: string;
  readonly shared?: SpreadsheetCoordination;
  readonly description: string;
  readonly log: (message: string) => void;
  /** How often a segment shown not to have landed after a lost answer is sent again. */
  readonly resends: number;
  call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>): Promise<T>;
  readonly now: () => number;
  readonly freshnessMs: number;
  /** Drive's modifiedTime of the spreadsheet, asked now (null: unknown); present only with the revision check. */
  readonly modifiedTime?: () => Promise<string | null>;
}

/** Drive's modifiedTime seen right after a batch of ours, and the tabs kept exactly as Google held them then. */
interface AfterOwn {
  readonly modified: string;
  readonly tabs: ReadonlySet<string>;
}

/** A batch under the shared lease: the version (mutable: each request of the batch bumps it) and the fence. */
interface Leased {
  /** The shared version as of now; no other instance writes meanwhile (UNKNOWN_VERSION: Redis could not say). */
  version: number;
  /** Throws when the lease was lost; called right before each request to Google. */
  readonly fence: () => Promise<void>;
  readonly shared: SpreadsheetCoordination;
}

interface QueuedWrite {
  readonly plan: (workbook: Workbook) => Planned<unknown>;
  readonly scope: Scope;
  settled: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One queued write as planned in a round: its result, or the error its planning threw; `step` when it writes. */
interface Planning {
  readonly write: QueuedWrite;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly step?: PlannedStep;
  /** The tab as the plan leaves it. */
  readonly after?: Tab;
}

/** How a request's failure leaves the spreadsheet: refused for a value (nothing applied), maybe applied, or not applied. */
type Failure = 'refused' | 'lost' | 'unsent';

type Outcome = { readonly kind: 'sent' } | { readonly kind: 'refused' | 'failed'; readonly error: unknown } | { readonly kind: 'again' };

export class GroupCommit {
  readonly #deps: CommitDeps;
  readonly #queue: QueuedWrite[] = [];
  #running: Promise<void> | null = null;
  #afterOwn: AfterOwn | null = null;

  constructor(deps: CommitDeps) {
    this.#deps = deps;
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>, scope: Scope): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ plan, scope, settled: false, resolve: resolve as (value: unknown) => void, reject });
      this.#kick();
    });
  }

  /** Resolves once every write queued so far is answered. */
  async settled(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  #kick(): void {
    if (this.#running !== null) return;
    this.#running = this.#batch().finally(() => {
      this.#running = null;
      if (this.#queue.length > 0) this.#kick();
    });
  }

  #batch(): Promise<void> {
    const { shared, lockKey } = this.#deps;
    return underWriteLock(lockKey, async () => {
      // Everything queued until now, while the batch before was in flight: no timer gathers more.
      const batch = this.#queue.splice(0);
      if (batch.length === 0) return;
      try {
        if (shared === undefined) await this.#commit(batch, null);
        else await shared.underLease(async (fence) => this.#commit(batch, { version: (await shared.version()) ?? UNKNOWN_VERSION, fence, shared }));
      } catch (error) {
        // The lease could not be had (503), or something unforeseen: every write not answered yet fails with it.
        for (const write of batch) settle(write, { error });
      }
    });
  }

  async #commit(batch: readonly QueuedWrite[], leased: Leased | null): Promise<void> {
    let pending = batch.filter((write) => !write.settled);
    /** Tabs read from Google in this batch: only this batch's confirmed writes changed them since (the lock, the lease). */
    const current = new Set<string>();
    let maxWrites = MAX_SEGMENT_WRITES;
    let resends = 0;
    /** Every request of this batch landed as planned, or was refused whole: the kept tabs are Google's, but for others' edits. */
    let clean = true;
    let wrote = false;
    const drive = { checked: false };
    while (pending.length > 0) {
      const round = await this.#plan(pending, leased, current, drive);
      let head = 0;
      // What writes nothing (a client's error, a match of no rows) is answered once every write before it is.
      for (; head < round.length && round[head].step === undefined; head++) settle(round[head].write, round[head]);
      const rest = round.slice(head);
      pending = pending.filter((write) => !write.settled);
      if (rest.length === 0) continue;
      const steps = rest.flatMap((planning) => (planning.step === undefined ? [] : [planning]));
      const segment = segmentOf(steps.map((planning) => planning.step!), maxWrites, current.has(steps[0].step!.plan.tab));
      const count = segment.length;
      const members = rest.slice(0, rest.indexOf(steps[count - 1]) + 1);
      const outcome = await this.#send(segment.kind, steps.slice(0, count), leased, current);
      wrote ||= outcome.kind !== 'refused';
      clean &&= outcome.kind === 'sent' || outcome.kind === 'refused';
      if (outcome.kind === 'sent') {
        for (const planning of members) settle(planning.write, planning);
      } else if (outcome.kind === 'refused' && count > 1) {
        // Nothing applied (Google refuses a request whole): halve until the one refused write is alone.
        maxWrites = Math.ceil(count / 2);
      } else if (outcome.kind === 'refused' || outcome.kind === 'failed') {
        for (const planning of steps.slice(0, count)) settle(planning.write, { error: outcome.error });
        if (outcome.kind === 'refused') maxWrites = MAX_SEGMENT_WRITES;
      } else if (++resends > this.#deps.resends) {
        const error = apiError('upstream_unavailable', 'Google Sheets did not confirm this write after several tries (lost answers, or its tab changing meanwhile); it was not applied. Send it again.', { 'Retry-After': '10' });
        for (const planning of steps.slice(0, count)) settle(planning.write, { error });
      }
      pending = pending.filter((write) => !write.settled);
    }
    if (wrote || !clean) await this.#learnOwnWrite(clean, current);
  }

  /**
   * After a batch wrote, with the revision check: Drive's modifiedTime now is taken for this
   * batch's (asked right after its last request; an edit by someone else in between would be
   * taken for ours, and missed until the tab is read again, within the freshness window), with
   * the tabs the batch read and kept exactly. Without the check, or after a request whose
   * outcome was not as planned: nothing is known.
   */
  async #learnOwnWrite(clean: boolean, current: ReadonlySet<string>): Promise<void> {
    this.#afterOwn = null;
    const cache = this.#deps.reader.cache;
    const tabs = [...current].filter((name) => cache.has(name));
    if (!clean || tabs.length === 0 || this.#deps.modifiedTime === undefined) return;
    const modified = await this.#deps.modifiedTime();
    if (modified !== null) this.#afterOwn = { modified, tabs: new Set(tabs) };
  }

  /**
   * Whether the tabs of `scope` are kept exactly as Google holds them, without a Sheets read:
   * kept at the end of our last batch, read from Google within the freshness window (with Redis:
   * at the current shared version), and Drive's modifiedTime unchanged since (one Drive request,
   * outside the Sheets quota; at most once a batch).
   */
  async #unchangedSinceOwnWrite(scope: Scope, leased: Leased | null, drive: { checked: boolean }): Promise<boolean> {
    const afterOwn = this.#afterOwn;
    const cache = this.#deps.reader.cache;
    const names = this.#tabsOf(scope);
    if (afterOwn === null || drive.checked || this.#deps.modifiedTime === undefined || names.length === 0) return false;
    const now = this.#deps.now();
    const kept = (name: string) =>
      afterOwn.tabs.has(name) && cache.has(name) && now - (cache.readAtOf(name) ?? Number.NEGATIVE_INFINITY) < this.#deps.freshnessMs && (leased === null || (leased.version !== UNKNOWN_VERSION && cache.versionOf(name) === leased.version));
    if (!names.every(kept)) return false;
    drive.checked = true;
    return (await this.#deps.modifiedTime()) === afterOwn.modified;
  }

  /**
   * Plans every pending write in order on the kept tabs, each on the rows the ones before it
   * leave. A write that cannot plan on what is kept (a tab not read yet; a PATCH or DELETE on a
   * tab not read in this batch; with Redis, an append on a tab kept from another version) has its
   * tab read from Google, and the round starts again.
   */
  async #plan(queued: readonly QueuedWrite[], leased: Leased | null, current: Set<string>, drive: { checked: boolean }): Promise<Planning[]> {
    const { reader } = this.#deps;
    const cache = reader.cache;
    const read = new Set<Scope>();
    let pending = queued;
    for (;;) {
      let workbook: Workbook | null = null;
      const round: Planning[] = [];
      let needs: QueuedWrite | null = null;
      for (const write of pending) {
        // A scope read in this round plans on what the read gave, even without its tab: the engine then answers tab_not_found, naming the tabs there are.
        if (!this.#known(write.scope) && !read.has(write.scope)) {
          needs = write;
          break;
        }
        workbook ??= cache.workbook();
        let planned: Planned<unknown>;
        try {
          planned = write.plan(workbook);
        } catch (error) {
          round.push({ write, error });
          continue;
        }
        const plan = planned.plan === null || isEmptyPlan(planned.plan) ? null : planned.plan;
        const onKept = plan !== null && isAppendOnly(plan) && (leased === null || (leased.version !== UNKNOWN_VERSION && cache.versionOf(plan.tab) === leased.version));
        if (!onKept && !this.#current(write.scope, current) && !read.has(write.scope)) {
          needs = write;
          break;
        }
        if (plan === null) {
          round.push({ write, result: planned.result });
          continue;
        }
        const before = workbook.tabs.find((tab) => tab.name === plan.tab);
        workbook = planned.workbook;
        round.push({ write, result: planned.result, step: { plan, before }, after: workbook.tabs.find((tab) => tab.name === plan.tab) });
      }
      if (needs === null) return round;
      const scope = needs.scope;
      if (this.#deps.reader.cache.has(this.#tabsOf(scope)[0] ?? '') && (await this.#unchangedSinceOwnWrite(scope, leased, drive))) {
        for (const name of this.#tabsOf(scope)) current.add(name);
        continue;
      }
      try {
        read.add(scope);
        await reader.read(scope, true, leased?.version ?? UNKNOWN_VERSION);
        for (const name of this.#tabsOf(scope)) current.add(name);
      } catch (error) {
        // The tab is gone, or Google could not be read: the writes needing it fail; the others go on.
        for (const write of pending) if (write.scope === scope) settle(write, { error });
        pending = pending.filter((write) => !write.settled);
      }
    }
  }

  /** Whether what is kept lets a write on `scope` plan at all (its tab, and for the first tab the list as Google gave it). */
  #known(scope: Scope): boolean {
    const cache = this.#deps.reader.cache;
    if (scope === undefined) return cache.listRead() && cache.allRead();
    if (scope === null) {
      const first = cache.firstTabs()[0];
      return cache.listRead() && first !== undefined && cache.has(first);
    }
    return cache.has(scope);
  }

  #current(scope: Scope, current: ReadonlySet<string>): boolean {
    const names = this.#tabsOf(scope);
    return names.length > 0 && names.every((name) => current.has(name));
  }

  #tabsOf(scope: Scope): string[] {
    const cache = this.#deps.reader.cache;
    if (scope === undefined) return (cache.meta ?? []).map((sheet) => sheet.name);
    if (scope === null) return cache.firstTabs();
    return [scope];
  }

  /** One segment as one request; its members (the writes it carries, and those writing nothing between them) are answered by the caller. */
  async #send(kind: SegmentKind, steps: readonly Planning[], leased: Leased | null, current: Set<string>): Promise<Outcome> {
    const { api, reader } = this.#deps;
    const first = steps[0].step!;
    const tab = first.plan.tab;
    const plannedSteps = steps.map((planning) => planning.step!);
    // Set by the last attempt that failed (the closure hides it from narrowing, hence the object).
    const seen: { failure: Failure } = { failure: 'unsent' };
    const watched = <T>(send: (signal: AbortSignal) => Promise<T>) => async (signal: AbortSignal): Promise<T> => {
      try {
        return await send(signal);
      } catch (error) {
        seen.failure = classify(error, signal);
        throw error;
      }
    };
    let landedElsewhere = false;
    try {
      if (leased !== null) await leased.fence();
      if (kind === 'append') {
        const request = appendRequest(plannedSteps, quoteSheetName);
        const updated = await this.#deps.call('write', 'once', watched((signal) => api.append(request.range, request.values, signal)));
        landedElsewhere = updated !== null && firstRowOf(updated) !== request.expectedRow;
      } else if (kind === 'values') {
        const ranges = valuesRequest(plannedSteps);
        await this.#deps.call('write', 'idempotent', watched((signal) => api.updateValues(ranges, signal)));
      } else if (kind === 'cells') {
        const sheetId = reader.cache.sheetIds().get(tab);
        if (sheetId === undefined) throw apiError('tab_not_found', `The tab "${tab}" no longer exists.`);
        const requests = plannedSteps.flatMap((step) => cellRequests(sheetId, step.plan, headerRowOf(step), step.before === undefined ? 0 : gridRows(step.before).length));
        await this.#deps.call('write', 'once', watched((signal) => api.batchUpdate(requests, signal)));
      } else {
        const requests = deleteRequest(plannedSteps, reader.cache.sheetIds());
        if (requests === null) throw apiError('tab_not_found', `The tab "${tab}" no longer exists.`);
        await this.#deps.call('write', 'once', watched((signal) => api.batchUpdate(requests, signal)));
      }
    } catch (error) {
      if (seen.failure === 'refused') return { kind: 'refused', error };
      if (seen.failure === 'lost') return this.#readBack(kind, steps, leased, current, error);
      if (isApiError(error) && error.code === 'tab_not_found') {
        // The tab went away since it was read: plan again on a fresh read, which says so.
        current.delete(tab);
        reader.cache.drop(tab);
        return { kind: 'again' };
      }
      return { kind: 'failed', error };
    }
    await this.#confirmed(steps, landedElsewhere, leased);
    return { kind: 'sent' };
  }

  /** Google took the segment: the kept tab takes its writes (and other instances hear of them) before anyone is answered. */
  async #confirmed(steps: readonly Planning[], landedElsewhere: boolean, leased: Leased | null): Promise<void> {
    const { reader } = this.#deps;
    const cache = reader.cache;
    const tab = steps[0].step!.plan.tab;
    const last = steps.at(-1)!;
    reader.generation++;
    const basisVersion = cache.versionOf(tab) ?? UNKNOWN_VERSION;
    const version = leased === null ? UNKNOWN_VERSION : await leased.shared.changed();
    if (leased !== null) leased.version = version ?? UNKNOWN_VERSION;
    // The kept tab plus these writes is the tab at the new version only when it was at the one just before.
    const after = version !== null && version !== UNKNOWN_VERSION && basisVersion === version - 1 ? version : UNKNOWN_VERSION;
    const readAt = cache.readAtOf(tab);
    // A formula's result, or rows placed where the cache did not expect them, are only known upstream.
    if (steps.some((planning) => hasFormula(planning.step!.plan)) || landedElsewhere || last.after === undefined || readAt === undefined) cache.drop(tab);
    else cache.setTab(last.after, readAt, undefined, after);
    if (landedElsewhere) this.#deps.log(`sheetrest: rows appended to ${this.#deps.description} landed below rows added by someone else; the cached tab was dropped`);
  }

  /** The answer was lost: read the tab again and decide whether the segment landed. */
  async #readBack(kind: SegmentKind, steps: readonly Planning[], leased: Leased | null, current: Set<string>, error: unknown): Promise<Outcome> {
    const { reader } = this.#deps;
    const tab = steps[0].step!.plan.tab;
    reader.generation++;
    let now: Tab | undefined;
    try {
      now = (await reader.read(tab, true, leased?.version ?? UNKNOWN_VERSION)).tabs.find((candidate) => candidate.name === tab);
    } catch {
      now = undefined;
    }
    const landed = landing(kind, steps.map((planning) => planning.step!), steps[0].step!.before, steps.at(-1)!.after, now);
    this.#deps.log(`sheetrest: ${this.#deps.description}: the answer to a write of ${steps.length} request(s) was lost; read back: ${landed}`);
    if (landed === 'absent') {
      // The fresh read is the tab before the segment: plan on it and send again.
      current.add(tab);
      return { kind: 'again' };
    }
    // Applied (the fresh read already holds the rows) or unknown: other instances read again either way.
    if (leased !== null) leased.version = (await leased.shared.changed()) ?? UNKNOWN_VERSION;
    current.delete(tab);
    if (landed === 'applied') return { kind: 'sent' };
    reader.cache.drop(tab);
    return { kind: 'failed', error };
  }
}

function settle(write: QueuedWrite, outcome: { readonly result?: unknown; readonly error?: unknown }): void {
  if (write.settled) return;
  write.settled = true;
  if ('error' in outcome && outcome.error !== undefined) write.reject(outcome.error);
  else write.resolve(outcome.result);
}

/**
 * What a failed request did upstream. A value Google refuses (400, not a missing tab) was not
 * applied; no answer (a timeout, a reset) or a 5xx may have been; anything else (429, 403, a
 * refusal on this side before sending) was not.
 */
function classify(error: unknown, signal: AbortSignal): Failure {
  if (isApiError(error)) return 'unsent';
  if (signal.aborted) return 'lost';
  const { status, message } = describeFailure(error);
  if (status === null || status >= 500) return 'lost';
  if (status === 400 && !/unable to parse range|api key not valid/i.test(message)) return 'refused';
  return 'unsent';
}

/** An append that may plan on the kept tab: it lands after whatever is there, and chose nothing by the rows (not an upsert's, not an increment id's). */
function isAppendOnly(plan: WritePlan): boolean {
  return plan.readsRows !== true && plan.replaced.length === 0 && plan.removed.length === 0 && plan.appended !== null && plan.appended.rows.length > 0;
}

/** `'People'!A5:C7` -> 5. */
function firstRowOf(range: string): number | null {
  const match = /!\$?[A-Za-z]*\$?(\d+)/.exec(range);
  return match === null ? null : Number(match[1]);
}
