// A pull-queue worker: claims tasks, runs the handler on each while
// heartbeating its lease every third of its length, and reports the ends in
// batches through `tasks:end`, as idem-client's `work_batch` does. Stopping
// lets the handlers finish within a grace period and gives back (releases)
// the leases of those that did not, so another worker takes them at once.

import type { IdemClient } from "./client.js";
import { LeaseLostError, problemError } from "./errors.js";
import type { EndTask, Task } from "./types.js";

/** What a handler gets beside its task. */
export interface WorkContext {
  /** The lease's token. */
  attemptId: string;
  /** Aborted when the lease is lost (another worker may hold the task now) or the worker stops past its grace. */
  signal: AbortSignal;
}

/** Runs one task: its return value is the task's `result`; a throw fails the attempt with its message. */
export type WorkHandler = (task: Task, context: WorkContext) => unknown | Promise<unknown>;

export interface WorkerOptions {
  /** Tasks claimed at once, 1–100 (default 10); at most this many handlers run at a time. */
  maxTasks?: number;
  /** Each lease's length in seconds (default 60); heartbeats renew it every third. */
  leaseS?: number;
  /** How long one claim waits for a due task, 0–30000 ms (default 5000). Stopping may wait this long for a claim in flight. */
  waitMs?: number;
  /** Only tasks with this tag. */
  tag?: string;
  /** Most ends per `tasks:end` call (1–100, default 100). */
  maxEndsPerCall?: number;
  /** Told of every error the loop survives (a failed claim, heartbeat or report). */
  onError?: (error: unknown) => void;
  /** Pause after a failed claim before the next, in ms (default 1000). */
  errorBackoffMs?: number;
}

interface Running {
  task: Task;
  attemptId: string;
  controller: AbortController;
  /** Set once the attempt's end is queued or the attempt was given up (lease lost, released). */
  settled: boolean;
  whenSettled: Promise<void>;
  settle: () => void;
}

const MAX_ERROR_CHARS = 4096;

/** The error text a failed attempt reports: at most 4,096 characters, no U+0000 (the server's rules). */
function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return Array.from(text.replace(/\u0000/g, "")).slice(0, MAX_ERROR_CHARS).join("") || "failed";
}

export class Worker {
  private readonly options: Required<Omit<WorkerOptions, "tag" | "onError">> & Pick<WorkerOptions, "tag" | "onError">;
  private readonly running = new Map<string, Running>();
  private readonly ready: EndTask[] = [];
  private flushing: Promise<void> | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Tasks whose ends were reported, for callers that count. */
  completed = 0;
  failed = 0;

  constructor(
    private readonly client: IdemClient,
    readonly queue: string,
    private readonly handler: WorkHandler,
    options: WorkerOptions = {},
  ) {
    this.options = {
      maxTasks: options.maxTasks ?? 10,
      leaseS: options.leaseS ?? 60,
      waitMs: options.waitMs ?? 5000,
      maxEndsPerCall: Math.min(100, Math.max(1, options.maxEndsPerCall ?? 100)),
      errorBackoffMs: options.errorBackoffMs ?? 1000,
      ...(options.tag !== undefined ? { tag: options.tag } : {}),
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
    };
  }

  /** Starts the loop; resolves once it stopped ({@link stop}) and every end was reported. */
  run(): Promise<void> {
    this.loop ??= this.runLoop();
    return this.loop;
  }

  /** Handlers running now. */
  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Stops claiming, waits up to `graceMs` for running handlers, releases the
   * leases of those still running (their handlers' signals are aborted and
   * their results dropped), reports every end, and resolves when done.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    this.wake?.();
    const all = this.allSettled();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((ok) => (timer = setTimeout(ok, graceMs)))]);
    clearTimeout(timer);
    await this.releaseRunning();
    await this.loop;
    await this.flush();
  }

  private report(error: unknown) {
    this.options.onError?.(error);
  }

  private async runLoop(): Promise<void> {
    while (!this.stopping) {
      const room = this.options.maxTasks - this.running.size;
      if (room <= 0) {
        // Full: wait for a handler to end before claiming more.
        await new Promise<void>((ok) => (this.wake = ok));
        this.wake = undefined;
        continue;
      }
      let tasks: Task[];
      try {
        tasks = (
          await this.client.claimTasks(this.queue, {
            maxTasks: room,
            waitMs: this.options.waitMs,
            leaseS: this.options.leaseS,
            ...(this.options.tag !== undefined ? { tag: this.options.tag } : {}),
          })
        ).value.tasks;
      } catch (error) {
        this.report(error);
        await new Promise((ok) => setTimeout(ok, this.options.errorBackoffMs));
        continue;
      }
      if (this.stopping) {
        // Claimed while stopping: give them back untouched.
        await Promise.all(tasks.map((t) => this.release(t)));
        break;
      }
      for (const task of tasks) this.start(task);
    }
    // Handlers that ignore their signal past a stop may still run: the loop
    // waits for every attempt to be settled, not for every handler to return.
    await this.allSettled();
    await this.flush();
  }

  private allSettled(): Promise<unknown> {
    return Promise.all([...this.running.values()].map((r) => r.whenSettled));
  }

  private async release(task: Task) {
    const attemptId = task.lease?.attempt_id;
    if (!attemptId) return;
    try {
      await this.client.releaseTask(this.queue, task.task_id, attemptId);
    } catch (error) {
      if (!(error instanceof LeaseLostError)) this.report(error);
    }
  }

  private async releaseRunning() {
    const left = [...this.running.values()].filter((r) => !r.settled);
    await Promise.all(
      left.map(async (r) => {
        r.settle();
        r.controller.abort(new Error("the worker stopped; the task was released"));
        await this.release(r.task);
      }),
    );
  }

  private start(task: Task) {
    const attemptId = task.lease?.attempt_id;
    // A lease without its token is not ours to act on (shown to holders only).
    if (!attemptId) return;
    const controller = new AbortController();
    let settle!: () => void;
    const whenSettled = new Promise<void>((ok) => (settle = ok));
    const entry: Running = {
      task,
      attemptId,
      controller,
      settled: false,
      whenSettled,
      settle: () => {
        entry.settled = true;
        settle();
      },
    };
    this.running.set(task.task_id, entry);
    void this.work(entry).finally(() => {
      this.running.delete(task.task_id);
      entry.settle();
      this.wake?.();
    });
  }

  private async work(entry: Running) {
    const { task, attemptId, controller } = entry;
    const every = Math.max(100, (this.options.leaseS * 1000) / 3);
    const heartbeat = setInterval(() => {
      this.client.heartbeatTask(this.queue, task.task_id, attemptId, this.options.leaseS).catch((error) => {
        if (error instanceof LeaseLostError) {
          // Another worker may own the task now: whatever this one still
          // does would be done twice, so it is told to stop and its end is dropped.
          entry.settle();
          controller.abort(error);
        } else {
          this.report(error);
        }
      });
    }, every);
    let end: EndTask;
    try {
      const result = await this.handler(task, { attemptId, signal: controller.signal });
      end = { task_id: task.task_id, attempt_id: attemptId, ...(result === undefined ? {} : { result: result as never }) };
    } catch (error) {
      end = { task_id: task.task_id, attempt_id: attemptId, error: errorText(error) };
    } finally {
      clearInterval(heartbeat);
    }
    if (entry.settled) return;
    this.ready.push(end);
    entry.settle();
    await this.flush();
  }

  /** Sends the ends ready now in one call (more calls past the per-call maximum); one call at a time. */
  private async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.ready.length === 0) return;
    this.flushing = (async () => {
      while (this.ready.length > 0) {
        const ends = this.ready.splice(0, this.options.maxEndsPerCall);
        try {
          const answer = await this.client.endTasks(this.queue, ends);
          answer.value.results.forEach((result, i) => {
            if (result.status === 200) {
              if (ends[i]!.error != null) this.failed++;
              else this.completed++;
              return;
            }
            const error = result.problem ? problemError(result.problem as never) : new Error(`end answered ${result.status}`);
            // A lost lease is no error of the loop's: the task is another's now.
            if (!(error instanceof LeaseLostError)) this.report(error);
          });
        } catch (error) {
          // Not even the client's retries got an answer: the leases run out
          // and the tasks are retried, which is what at-least-once means.
          this.report(error);
        }
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }
}

/** A worker of `queue` running `handler`; call `run()` to start it. */
export function createWorker(client: IdemClient, queue: string, handler: WorkHandler, options?: WorkerOptions): Worker {
  return new Worker(client, queue, handler, options);
}
