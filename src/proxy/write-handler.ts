import { describeError, InfrastructureError } from "../errors.js";
import { setTimeout as delay } from "node:timers/promises";
import {
  RequestWithheld,
  type ApiServerConnection,
  type BufferedAnswer,
} from "../kube/api-server-connection.js";
import { isoNow, type Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { mutationRequest, objectPath } from "./fault-actions.js";
import type { KillRecord, TakenFault } from "./faults.js";
import type { FaultPlan } from "./faults.js";
import { withPrecondition } from "./preconditions.js";
import { protobufMetadata } from "./protobuf-metadata.js";
import type { RequestInfo } from "./request-classifier.js";
import { decideEffect, type EffectFacts } from "./write-effect.js";
import { readChangedFields } from "./changed-fields.js";
import { tagOf, type WriteEntry, type WriteLog } from "./write-log.js";
import {
  isStaleConflict,
  itemCount,
  jsonMetadata,
  parseAnswer,
  reasonFor,
  statusReason,
} from "./write-answers.js";
import { objectKey, readWrite, writeEntryOf, type IncomingWrite, type ReadWrite } from "./write-request.js";

export type { IncomingWrite } from "./write-request.js";

/** How often the proxy re-reads and resends an unconditional write whose added precondition went stale. */
export const PRECONDITION_ATTEMPTS = 5;

/** What the handler decided the client gets. */
export type WriteAnswer =
  | { readonly kind: "answer"; readonly answer: BufferedAnswer }
  | {
      readonly kind: "status";
      readonly status: number;
      readonly reason: string;
      readonly message: string;
      readonly retryAfterSeconds?: number;
    }
  /** Never answer (fail-with hang). */
  | { readonly kind: "hang" }
  /** Cut the connection without an answer (crash-after, and writes of a crashed run). */
  | { readonly kind: "cut" };

/** The proxy's side of the write handler: what it shares with the reads. */
export interface WriteHandlerDeps {
  readonly connection: ApiServerConnection;
  readonly log: WriteLog;
  readonly faults: FaultPlan;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Kills the operator; resolves when it is gone, with what was killed. */
  readonly crash: () => Promise<KillRecord>;
}

interface ObjectState {
  readonly exists: boolean;
  readonly resourceVersion?: string;
  readonly uid?: string;
  readonly terminating?: boolean;
  readonly ownerUids?: readonly string[];
  /** The whole object as read (JSON). */
  readonly object?: unknown;
}

/**
 * Every write through the proxy, in small steps: read what it is (its
 * identity, body and precondition), act before it (faults that write or
 * answer first), forward it (atomic with a read of the prior state when it
 * carries no precondition), record it (with an exact effect), act after it
 * (crash-after). The operator's writes and the kit's own go through the same
 * steps; faults act only on the operator's.
 */
export class WriteHandler {
  /** Operator runs that were killed: their writes still arriving are dropped. */
  private readonly killedRuns = new Set<number>();
  /** The run being killed while a crash-after is under way. */
  private crashingRun: number | undefined;
  private readonly droppedDuringCrash: number[] = [];
  /** Owner UIDs of objects seen in answers, for matching writes whose body does not say. */
  private readonly owners = new Map<string, readonly string[]>();
  /** Writes a fault left unanswered on purpose: not "in flight" for quiet detection. */
  readonly hung: WriteEntry[] = [];

  constructor(private readonly deps: WriteHandlerDeps) {}

  async handle(write: IncomingWrite): Promise<WriteAnswer> {
    const request = this.read(write);
    if (this.isDropped(write)) return this.drop(request);

    const fault = this.deps.faults.takeBefore({
      ...request.info,
      actor: write.actor,
      ownerUids: request.ownerUids,
      hasPrecondition: request.precondition !== undefined,
      countable: tagOf(request.info, request.parsed) === undefined && !request.dryRun,
      body: request.parsed,
    });
    if (fault?.spec.kind === "fail-with") return this.failWith(request, fault);
    const kitWrite = fault ? await this.mutateBefore(request, fault) : undefined;
    // A fault whose own write failed has reported so; the operator's write goes as it came.
    const acting = fault && kitWrite ? { fault, kitWrite } : undefined;
    if (this.isDropped(write)) return this.drop(request, acting?.fault);
    return this.forwardAndRecord(request, acting);
  }

  /** Step 1: what the write is. */
  private read(write: IncomingWrite): ReadWrite {
    return readWrite(write, (key) => this.owners.get(key));
  }

  /**
   * A write of a run that is being, or was, killed never reaches the server.
   * During a crash, that is every run up to the one being killed: a crash
   * handler that starts the next run before it returns (an operator in a
   * Pod, whose replacement comes up on its own) lets that run's writes through.
   */
  private isDropped(write: IncomingWrite): boolean {
    const run = write.run ?? 0;
    return (
      write.actor === "operator" &&
      (this.killedRuns.has(run) || (this.crashingRun !== undefined && run <= this.crashingRun))
    );
  }

  /** Logs a write of a killed run that never reached the server; a fault that had taken it fails. */
  private drop(request: ReadWrite, fault?: TakenFault): WriteAnswer {
    const entry = this.entry(
      request,
      this.deps.log.takeSeq(),
      { code: 0, reason: "DroppedAfterCrash" },
      {
        effect: "rejected",
        why: "dropped: the operator was crashed before it was sent",
      },
    );
    this.deps.log.append(entry);
    this.droppedDuringCrash.push(entry.seq);
    fault?.fail(
      new Error(`the write it acted before was dropped: the operator was crashed (entry ${entry.seq})`),
    );
    return { kind: "cut" };
  }

  /** Step 2a: answer without forwarding. */
  private failWith(request: ReadWrite, fault: TakenFault): WriteAnswer {
    const spec = fault.spec;
    if (spec.kind !== "fail-with") throw new Error("not a fail-with fault");
    const hang = spec.status === "hang";
    const code = spec.status === "hang" ? 0 : spec.status;
    const entry = this.entry(
      request,
      this.deps.log.takeSeq(),
      { code, ...(hang ? {} : { reason: reasonFor(code) }), fault: fault.id },
      { effect: "rejected", why: hang ? "hung by fail-with" : "answered by fail-with" },
    );
    this.deps.log.append(entry);
    if (hang) this.hung.push(entry);
    fault.fire({ hit: entry });
    if (spec.status === "hang") return { kind: "hang" };
    return {
      kind: "status",
      status: spec.status,
      reason: reasonFor(spec.status),
      message: "injected by reconcile-conformance (fail-with)",
      ...(spec.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: spec.retryAfterSeconds }),
    };
  }

  /** Step 2b: the kit's own write first; undefined when it failed (the fault then reports failure). */
  private async mutateBefore(request: ReadWrite, fault: TakenFault): Promise<WriteEntry | undefined> {
    const spec = fault.spec;
    const mutation = spec.kind === "mutate-before" ? spec.mutation : { kind: "annotate" as const };
    const target = spec.kind === "mutate-before" ? (spec.target ?? "written-object") : "written-object";
    const kitRequest = mutationRequest(mutation, target, request.info);
    try {
      const { entry } = await this.kitWrite(
        {
          actor: "kit",
          method: kitRequest.method,
          url: kitRequest.path,
          headers: { "Content-Type": kitRequest.contentType, Accept: "application/json" },
          body: kitRequest.body,
          time: isoNow(this.deps.clock),
        },
        fault.id,
      );
      if (entry.code < 200 || entry.code >= 300) {
        throw new InfrastructureError(
          "proxy/mutate-before-failed",
          `${spec.kind}: the kit's write to ${kitRequest.path} was answered ${entry.code} ${entry.reason ?? ""}`.trim(),
        );
      }
      return entry;
    } catch (error) {
      this.deps.logger.warn(`proxy: ${spec.kind} could not act: ${describeError(error)}`);
      fault.fail(error);
      return undefined;
    }
  }

  /** A write of the kit's own, through the same steps (no faults), logged as `actor: kit`. */
  async kitWrite(write: IncomingWrite, fault?: string): Promise<Forwarded> {
    const forwarded = await this.forward(this.read(write), fault);
    if (forwarded === "dropped") throw new Error("a kit write is never dropped");
    this.deps.log.append(forwarded.entry);
    return forwarded;
  }

  /** Steps 3-5 for an operator write. */
  private async forwardAndRecord(
    request: ReadWrite,
    mutated: { fault: TakenFault; kitWrite: WriteEntry } | undefined,
  ): Promise<WriteAnswer> {
    let forwarded: Forwarded | "dropped";
    try {
      forwarded = await this.forward(request, mutated?.fault.id);
    } catch (error) {
      // No answer from the API server (a cut connection, credentials that could not be read):
      // the write may or may not have landed. Logged as such; the fault fails; the client gets 502.
      const entry = this.entry(
        request,
        this.deps.log.takeSeq(),
        { code: 0, reason: "NoAnswer", ...(mutated ? { fault: mutated.fault.id } : {}) },
        { effect: "ambiguous", why: `no answer from the API server: ${describeError(error)}` },
      );
      this.deps.log.append(entry);
      mutated?.fault.fail(error);
      throw error;
    }
    if (forwarded === "dropped") return this.drop(request, mutated?.fault);
    const { answer } = forwarded;
    // One crash at a time: a write answered while another crash is under way is not a crash line.
    const crash =
      this.crashingRun !== undefined || this.isDropped(request.write)
        ? undefined
        : this.deps.faults.takeAfter(forwarded.entry);
    const entry = crash ? { ...forwarded.entry, fault: crash.id } : forwarded.entry;
    this.deps.log.append(entry);
    if (mutated) mutated.fault.fire({ hit: entry, kitWrite: mutated.kitWrite });
    if (!crash) return { kind: "answer", answer };
    return this.crashAfter(entry, crash, answer);
  }

  /** Step 5: the write succeeded; kill the operator before it hears so. */
  private async crashAfter(
    entry: WriteEntry,
    crash: TakenFault,
    answer: BufferedAnswer,
  ): Promise<WriteAnswer> {
    const run = entry.run ?? 0;
    this.crashingRun = run; // from here on, no other write of this run (or an older one) gets through
    this.killedRuns.add(run);
    this.droppedDuringCrash.length = 0;
    try {
      const kill = await this.deps.crash();
      crash.fire({ hit: entry, kill, dropped: [...this.droppedDuringCrash] });
      return { kind: "cut" };
    } catch (error) {
      // The kill failed: the fault says so, and the operator gets its real answer (no synthetic one).
      this.killedRuns.delete(run);
      this.deps.logger.warn(`proxy: crash-after could not kill the operator: ${describeError(error)}`);
      crash.fail(error);
      return { kind: "answer", answer };
    } finally {
      this.crashingRun = undefined;
    }
  }

  /**
   * Steps 3 and 4: forward (with a precondition of the proxy's when the
   * write has none) and build its log entry; the caller appends it.
   */
  private async forward(request: ReadWrite, fault: string | undefined): Promise<Forwarded | "dropped"> {
    const { info } = request;
    const needsPrior =
      info.verb === "delete" ||
      (request.precondition === undefined &&
        (info.verb === "update" || info.verb === "patch") &&
        !request.dryRun);
    let prior: ObjectState | undefined;
    let sent: { body: Buffer; proxyPrecondition?: { resourceVersion: string; attempts: number } } = {
      body: request.write.body,
    };
    let seq = 0;
    let answer: BufferedAnswer | undefined;
    for (let attempt = 1; attempt <= PRECONDITION_ATTEMPTS && answer === undefined; attempt++) {
      prior = needsPrior ? await this.readObject(info) : undefined;
      const conditioned =
        prior?.resourceVersion && info.verb !== "delete" && request.precondition === undefined
          ? withPrecondition(request.body, prior.resourceVersion)
          : undefined;
      sent = conditioned
        ? {
            body: conditioned,
            proxyPrecondition: { resourceVersion: prior?.resourceVersion ?? "", attempts: attempt },
          }
        : { body: request.write.body };
      const result = await this.send(request.write, sent.body);
      if (result === "dropped") return "dropped";
      seq = result.seq;
      if (conditioned && isStaleConflict(result.answer) && attempt < PRECONDITION_ATTEMPTS) {
        // Another writer won the race; give it a moment before reading again.
        await delay(attempt * 2);
        continue;
      }
      if (conditioned && isStaleConflict(result.answer)) {
        // Another writer kept winning: send the write as the operator did, and say the effect is unknown.
        sent = { body: request.write.body };
        const last = await this.send(request.write, sent.body);
        if (last === "dropped") return "dropped";
        seq = last.seq;
        answer = last.answer;
        break;
      }
      answer = result.answer;
    }
    if (answer === undefined) throw new Error("unreachable: no answer after precondition attempts");

    const meta = protobufMetadata(answer.body) ?? jsonMetadata(parseAnswer(answer));
    const ok = answer.status >= 200 && answer.status < 300;
    const facts: EffectFacts = {
      verb: info.verb,
      subresource: info.subresource,
      status: answer.status,
      dryRun: request.dryRun,
      storesNothing: tagOf(info) === "review",
      basedOn: request.precondition ?? sent.proxyPrecondition?.resourceVersion,
      ...(prior ? { prior } : {}),
      ...(ok && meta.resourceVersion ? { answeredResourceVersion: meta.resourceVersion } : {}),
      ...(info.verb === "deletecollection" ? { deletedItems: itemCount(parseAnswer(answer)) } : {}),
      ...(ok && (info.verb === "update" || info.verb === "patch") && releasedLast(parseAnswer(answer))
        ? { releasedLastFinalizer: true }
        : {}),
    };
    const decision = decideEffect(facts);
    const changedPaths =
      decision.effect === "changed" && facts.basedOn !== undefined && meta.resourceVersion
        ? await readChangedFields(this.deps.connection, {
            info,
            basedOn: facts.basedOn,
            prior: prior?.object,
            // A /scale write answers with a Scale, not the object: only the object itself or its status.
            ...(info.subresource === undefined || info.subresource === "status"
              ? { answered: parseAnswer(answer) }
              : {}),
            answeredResourceVersion: meta.resourceVersion,
          })
        : undefined;
    if (ok && meta.ownerUids)
      this.owners.set(objectKey({ ...info, name: info.name ?? meta.name }), meta.ownerUids);
    const entry = this.entry(
      request,
      seq,
      {
        code: answer.status,
        ...(ok ? {} : { reason: statusReason(answer) }),
        ...(sent.proxyPrecondition ? { proxyPrecondition: sent.proxyPrecondition } : {}),
        ...(prior?.resourceVersion ? { priorResourceVersion: prior.resourceVersion } : {}),
        ...(ok && !info.name && meta.name ? { name: meta.name } : {}),
        ...(ok && (meta.uid ?? prior?.uid) ? { uid: meta.uid ?? prior?.uid } : {}),
        ...(ok && meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
        ...(ok && meta.generation !== undefined ? { generation: meta.generation } : {}),
        ...((ok && meta.ownerUids) || request.ownerUids
          ? { ownerUids: (ok && meta.ownerUids) || request.ownerUids }
          : {}),
        ...(fault ? { fault } : {}),
        ...(changedPaths ? { changedPaths } : {}),
      },
      decision,
    );
    return { entry, answer };
  }

  /** The stored object's state, read as JSON just before a write (the kit's credentials, no side effects). */
  private async readObject(info: RequestInfo): Promise<ObjectState> {
    const answer = await this.deps.connection.exchange({
      method: "GET",
      path: objectPath({ ...info, subresource: undefined }),
      headers: { Accept: "application/json" },
      idleTimeoutMs: 30_000,
    });
    if (answer.status !== 200) return { exists: false };
    const object = parseAnswer(answer);
    const meta = jsonMetadata(object);
    return {
      exists: true,
      object,
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      ...(meta.uid ? { uid: meta.uid } : {}),
      ...(meta.terminating ? { terminating: true } : {}),
      ...(meta.ownerUids ? { ownerUids: meta.ownerUids } : {}),
    };
  }

  /**
   * Sends one attempt, numbered as it leaves; "dropped" when the operator's
   * run was killed by the time it would have left (checked after every await).
   */
  private async send(
    write: IncomingWrite,
    body: Buffer,
  ): Promise<{ seq: number; answer: BufferedAnswer } | "dropped"> {
    const headers = { ...write.headers };
    delete headers["content-length"];
    // The proxy reads every answer to a write; a compressed one (large objects, when the client
    // accepts gzip) would leave its effect unknown. Any client takes an uncompressed answer.
    delete headers["accept-encoding"];
    let seq = 0;
    try {
      const answer = await this.deps.connection.exchange(
        {
          method: write.method,
          path: write.url,
          headers,
          idleTimeoutMs: 0,
          shouldSend: () => {
            if (this.isDropped(write)) return false;
            seq = this.deps.log.takeSeq(); // numbered in the order writes leave for the API server
            return true;
          },
        },
        body,
      );
      return { seq, answer };
    } catch (error) {
      if (error instanceof RequestWithheld) return "dropped";
      throw error;
    }
  }

  private entry(
    request: ReadWrite,
    seq: number,
    outcome: Partial<WriteEntry> & { code: number },
    decision: { effect: WriteEntry["effect"]; why?: string },
  ): WriteEntry {
    return writeEntryOf(request, seq, outcome, decision);
  }
}

interface Forwarded {
  readonly entry: WriteEntry;
  readonly answer: BufferedAnswer;
}

/** An answered object that is terminating with no finalizer left: the write that answered it deleted it. */
function releasedLast(answered: unknown): boolean {
  const metadata = (
    answered as { metadata?: { deletionTimestamp?: unknown; finalizers?: unknown[] } } | undefined
  )?.metadata;
  return metadata?.deletionTimestamp !== undefined && (metadata.finalizers ?? []).length === 0;
}
