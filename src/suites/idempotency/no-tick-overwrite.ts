import type { Contract } from "../../contract/load-contract.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { describeClockWrite, firingOf, objectKey } from "../../scenario/clock-marks.js";
import { writeEvidence, type ChildRecord } from "../../scenario/reference-state.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import { defineCheck, type Judgement, type Skip } from "../check.js";
import { globMatches } from "../../contract/promises.js";
import { ObjectKinds, sortByPromises, writeLabel } from "../shared/promised.js";

/** One fault-free life's operator writes, as its reference recorded them (clock marks included). */
export interface TickLife {
  /** "reference of spec 0", "second life of spec 0". */
  readonly name: string;
  readonly writes: readonly WriteEntry[];
}

/** The fault-free lives of spec 0: the check needs no scenario of its own. */
export interface TickLives {
  readonly lives: readonly TickLife[];
  /** The reference's children, for their kinds (the contract's promises are by kind). */
  readonly children: readonly Pick<ChildRecord, "group" | "resource" | "ref">[];
}

/** A later tick's write to an object an earlier tick created: what it did, and the create. */
export interface TickOverwrite {
  readonly life: string;
  readonly created: WriteEntry;
  readonly later: WriteEntry;
}

/** What a life's ticks did to one another's objects. */
export interface TickOverwrites {
  /** The firings of the clock that wrote anything, over all lives. */
  readonly ticks: number;
  /** Changes of what an earlier tick created, beyond its metadata or of fields the write log could not read. */
  readonly overwrites: readonly TickOverwrite[];
  /** Creates refused because an earlier tick's object has the name. */
  readonly collisions: readonly TickOverwrite[];
  /** Changes of an earlier tick's object only in its metadata (a label that marks it done): not counted. */
  readonly metadataOnly: readonly TickOverwrite[];
}

/**
 * Reads, in each life, the objects a tick of the operator's clock created
 * (by which firing) and what a later firing of the clock wrote to them: a
 * change beyond metadata is an overwrite; a create refused because the
 * name is taken by such an object is a collision. A tick whose create came
 * amid other work is not told as the clock's; `onePerTick` says which
 * objects are a tick's record however their create was told (the
 * contract's clock.onePerTick). Deletes are not counted (a history limit
 * prunes old ticks), and an object deleted and created again is a new one.
 * Pure.
 */
export function tickOverwrites(
  lives: readonly TickLife[],
  onePerTick: (write: WriteEntry) => boolean = () => false,
): TickOverwrites {
  const firings = new Set<string>();
  const overwrites: TickOverwrite[] = [];
  const collisions: TickOverwrite[] = [];
  const metadataOnly: TickOverwrite[] = [];
  for (const { name: life, writes } of lives) {
    const madeByTick = new Map<string, WriteEntry>();
    for (const write of writes) {
      const firing = firingOf(write);
      if (firing !== undefined) firings.add(`${life}/${firing}`);
      if (!write.name || write.subresource) continue;
      const key = objectKey(write);
      if (write.effect === "deleted") {
        madeByTick.delete(key);
        continue;
      }
      if (write.effect === "created") {
        if (firing !== undefined || onePerTick(write)) madeByTick.set(key, write);
        continue;
      }
      const created = madeByTick.get(key);
      // Only a later firing of the clock: what the kit's stimuli or the creating burst wrote is not a tick's.
      if (firing === undefined || !created || firingOf(created) === firing) continue;
      const pair = { life, created, later: write };
      if (write.verb === "create" && write.reason === "AlreadyExists") collisions.push(pair);
      else if (write.effect !== "changed") continue;
      else if (write.changedPaths?.length && write.changedPaths.every((p) => p.startsWith("metadata.")))
        metadataOnly.push(pair);
      else overwrites.push(pair);
    }
  }
  return { ticks: firings.size, overwrites, collisions, metadataOnly };
}

/**
 * Each tick of the operator's own clock leaves what an earlier tick made as
 * it was: a schedule's second Job does not replace the first one's record,
 * nor collide with its name. Judged on the fault-free lives of spec 0 (a
 * clock horizon lets their ticks happen); a rewrite that is meant (a
 * renewal) is declared volatile in the contract's promises.
 */
export const noTickOverwrite = defineCheck<TickLives, TickLives>({
  id: "idempotency/no-tick-overwrite",
  level: "SHOULD",
  summary:
    "a tick of the operator's own clock does not rewrite, or collide with, what an earlier tick created",
  references: () => [0],
  targets({ references }): readonly TickLives[] | Skip {
    const reference = references.get(0);
    if (!reference) return [];
    const lives = faultFreeLives(reference);
    if (tickOverwrites(lives).ticks === 0) {
      return {
        target: "clock ticks",
        skip:
          reference.delayedRequeue === true
            ? "the operator's clock wrote nothing in the fault-free lives, though it had a delayed requeue pending at convergence: set clock.horizon to let its ticks happen"
            : "the operator's clock wrote nothing in the fault-free lives",
      };
    }
    const children = reference.children.map(({ group, resource, ref }) => ({ group, resource, ref }));
    return [{ lives, children }];
  },
  targetName: () => "clock ticks",
  observer: {
    scenario: "clock-ticks",
    // Nothing to do: the references recorded the lives.
    observe: (_context, target) => Promise.resolve(target),
  },
  judge(observation, contract): Judgement {
    return judgeTickOverwrites(observation, contract);
  },
});

/**
 * The fault-free lives a spec-0 reference recorded, each with the writes
 * tickOverwrites reads (the clock's, creates and deletes): what the check records.
 */
function faultFreeLives(reference: SpecReference): TickLife[] {
  const read = (writes: readonly WriteEntry[]) =>
    writes.filter((w) => w.clock !== undefined || w.effect === "deleted" || w.effect === "created");
  return [
    { name: "the reference of spec 0", writes: read(reference.writes) },
    ...(reference.secondLife
      ? [{ name: "the second fault-free life of spec 0", writes: read(reference.secondLife.writes) }]
      : []),
  ];
}

/** How the evidence names the write that created a tick's object. */
function createdBy(write: WriteEntry): string {
  return write.clock
    ? describeClockWrite(write)
    : `write ${write.seq} at ${write.time.slice(11, 23)}, amid other work; a tick's record by the contract's clock.onePerTick`;
}

/** The verdict on the lives' ticks. Pure. */
export function judgeTickOverwrites(observation: TickLives, contract: Contract): Judgement {
  const kinds = new ObjectKinds(contract, observation.children);
  const records = contract.clock.onePerTick ?? [];
  const found = tickOverwrites(observation.lives, (w) => {
    const kind = kinds.kindOf(w);
    return records.some(
      (r) => r.kind === kind && (r.name === undefined || globMatches(r.name, w.name ?? "")),
    );
  });
  const sorted = sortByPromises(
    found.overwrites.map((o) => o.later),
    kinds,
  );
  const pairOf = (w: WriteEntry) => [...found.overwrites, ...found.collisions].find((o) => o.later === w);
  const describe = (o: TickOverwrite | undefined, what: string) =>
    o
      ? `${o.life}: ${writeLabel(o.later)} ${what} ${o.created.resource}/${o.created.name ?? "?"}, which an earlier tick created (${createdBy(o.created)}); the later one: ${describeClockWrite(o.later)}`
      : what;
  const notes = [
    ...sorted.excused.map((e) => `not counted: ${e.why}`),
    ...found.metadataOnly.map((o) => `not counted (metadata only): ${describe(o, "changed")}`),
  ];
  // A change whose fields are unread may have been metadata only: never counted, whatever the promises.
  const unknown = [...sorted.unknown, ...sorted.counted.filter((w) => w.changedPaths === undefined)];
  const counted = [
    ...sorted.counted.filter((w) => w.changedPaths !== undefined).map((w) => pairOf(w)),
    ...found.collisions,
  ].filter((o): o is TickOverwrite => o !== undefined);
  if (counted.length > 0) {
    return {
      status: "failed",
      message: `${counted.length} tick(s) of the operator's clock rewrote or collided with what an earlier tick created: each tick's object needs a name of its own (its tick's time or number)`,
      evidence: {
        // Each create once, though several later ticks rewrote what it made.
        writes: [...new Set(counted.flatMap((o) => [o.created, o.later]))].map(writeEvidence),
        notes: [
          ...counted.map((o) =>
            describe(o, o.later.reason === "AlreadyExists" ? "was refused (AlreadyExists) for" : "changed"),
          ),
          ...notes,
          "a rewrite that is meant (a renewal in place) is declared volatile in the contract's promises",
        ],
      },
    };
  }
  if (unknown.length > 0) {
    return {
      status: "inconclusive",
      message: `${unknown.length} later tick(s) changed what an earlier tick created, and which fields could not be read`,
      evidence: {
        writes: unknown.map(writeEvidence),
        notes: [...unknown.map((w) => describe(pairOf(w), "changed")), ...notes],
      },
    };
  }
  return {
    status: "passed",
    message: `${found.ticks} tick(s) of the operator's clock wrote in the fault-free lives; none rewrote or collided with what an earlier tick created`,
    ...(notes.length > 0 ? { evidence: { notes } } : {}),
  };
}
