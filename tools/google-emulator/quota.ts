// Per-minute request quotas as the Sheets API usage-limits page documents them: reads and writes
// counted separately, per project (300/min) and per user per project (60/min). The 61st read by
// one user within a minute -> 429 RESOURCE_EXHAUSTED until a minute has passed since the oldest.
import { GoogleError } from './errors.ts';

export interface QuotaLimits {
  readPerMinutePerUser?: number;
  writePerMinutePerUser?: number;
  readPerMinutePerProject?: number;
  writePerMinutePerProject?: number;
  /** The window the limits count over; default a minute, as Google's. Tests shorten it. */
  windowMs?: number;
}

export type Bucket = 'read' | 'write';


export class Quota {
  private readonly limits: Required<Omit<QuotaLimits, 'windowMs'>>;
  private readonly windowMs: number;
  /** "read:user:<id>", "read:project"... -> times of the requests counted in the last minute. */
  private readonly windows = new Map<string, number[]>();

  constructor(limits: QuotaLimits = {}) {
    this.limits = {
      readPerMinutePerUser: limits.readPerMinutePerUser ?? 60,
      writePerMinutePerUser: limits.writePerMinutePerUser ?? 60,
      readPerMinutePerProject: limits.readPerMinutePerProject ?? 300,
      writePerMinutePerProject: limits.writePerMinutePerProject ?? 300,
    };
    this.windowMs = limits.windowMs ?? 60_000;
  }

  /** Counts one request, or throws 429 without counting it (a refused request uses no quota). */
  take(bucket: Bucket, user: string, now = Date.now()): void {
    const checks = [
      { key: `${bucket}:project`, limit: bucket === 'read' ? this.limits.readPerMinutePerProject : this.limits.writePerMinutePerProject, per: 'per minute' },
      { key: `${bucket}:user:${user}`, limit: bucket === 'read' ? this.limits.readPerMinutePerUser : this.limits.writePerMinutePerUser, per: 'per minute per user' },
    ];
    const windows = checks.map(({ key }) => {
      const recent = (this.windows.get(key) ?? []).filter((at) => at > now - this.windowMs);
      this.windows.set(key, recent);
      return recent;
    });
    checks.forEach(({ limit, per }, i) => {
      if (windows[i].length >= limit) throw quotaExceeded(bucket, per);
    });
    for (const window of windows) window.push(now);
  }

  reset(): void {
    this.windows.clear();
  }
}

function quotaExceeded(bucket: Bucket, per: string): GoogleError {
  const metric = bucket === 'read' ? 'Read requests' : 'Write requests';
  const limitName = `${bucket === 'read' ? 'Read' : 'Write'}Requests${per === 'per minute' ? 'PerMinute' : 'PerMinutePerUser'}`;
  return new GoogleError(429, `Quota exceeded for quota metric '${metric}' and limit '${metric} ${per}' of service 'sheets.googleapis.com' for consumer 'project_number:0'.`, {
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RATE_LIMIT_EXCEEDED',
        domain: 'googleapis.com',
        metadata: { service: 'sheets.googleapis.com', quota_metric: `sheets.googleapis.com/${bucket}_requests`, quota_limit: limitName, consumer: 'projects/0' },
      },
    ],
  });
}
